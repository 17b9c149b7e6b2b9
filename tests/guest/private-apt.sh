# SPDX-License-Identifier: GPL-2.0-or-later
#
# Sourced by the guest fetch scripts: a private apt configuration in
# folder $1 for architecture $2 and the Debian suites $3... (main), so
# packages of another architecture or release are downloaded without
# touching this machine's apt state.  Suites named *-security come from
# $DEBIAN_SECURITY_MIRROR (default deb.debian.org/debian-security), the
# others from $DEBIAN_MIRROR.  This machine's apt.conf.d (a proxy, say)
# still applies.  Sets and exports APT_CONFIG.
private_apt() {
    _apt=$1 _arch=$2
    shift 2
    mkdir -p "$_apt/lists/partial" "$_apt/cache/archives/partial"
    _mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
    _key=/usr/share/keyrings/debian-archive-keyring.gpg
    _security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
    for _suite in "$@"; do
        case "$_suite" in
            *-security) echo "deb [signed-by=$_key] $_security $_suite main" ;;
            *) echo "deb [signed-by=$_key] $_mirror $_suite main" ;;
        esac
    done > "$_apt/sources.list"
    cat > "$_apt/apt.conf" <<EOC
APT::Architecture "$_arch";
APT::Architectures { "$_arch"; };
Dir::Etc::SourceList "$_apt/sources.list";
Dir::Etc::SourceParts "/nonexistent";
Dir::State::Lists "$_apt/lists";
Dir::Cache "$_apt/cache";
Dir::State::status "/dev/null";
EOC
    APT_CONFIG="$_apt/apt.conf"
    export APT_CONFIG
}
