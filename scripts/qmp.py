# SPDX-License-Identifier: GPL-2.0-or-later
"""A minimal QMP client and VM launcher for the fork's demo and tests."""

import json
import os
import socket
import subprocess
import tempfile
import time


class QMPError(Exception):
    pass


def recv_line(sock, buf, what):
    """One line from sock, buf holding what was read before: returns
    (line, the rest); QMPError naming what when the peer closed."""
    while b"\n" not in buf:
        data = sock.recv(65536)
        if not data:
            raise QMPError("%s connection closed" % what)
        buf += data
    return buf.split(b"\n", 1)


class QMPConnection:
    """A QMP connection over a connected socket (after the greeting is
    read and capabilities are negotiated by whoever made it)."""

    name = "qemu"
    sock = None
    buf = b""

    @classmethod
    def attach(cls, path, name="qemu"):
        """Connect to a QMP unix socket at path, read the greeting and
        negotiate capabilities; OSError when nobody listens."""
        conn = cls()
        conn.name = name
        conn.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.sock.connect(path)
            conn._recv()                   # greeting
            conn.cmd("qmp_capabilities")
        except (OSError, QMPError):
            conn.sock.close()
            raise
        return conn

    def _recv(self):
        line, self.buf = recv_line(self.sock, self.buf, "%s: QMP" % self.name)
        return json.loads(line)

    def cmd(self, execute, **arguments):
        msg = {"execute": execute}
        if arguments:
            msg["arguments"] = arguments
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            resp = self._recv()
            if "event" in resp:
                continue
            if "error" in resp:
                raise QMPError("%s: %s" % (execute, resp["error"]["desc"]))
            return resp["return"]

    def hmp(self, line):
        return self.cmd("human-monitor-command", **{"command-line": line})


class VM(QMPConnection):
    """Starts QEMU with a QMP unix socket; use as a context manager.
    With qtest=True, QEMU runs under the qtest accelerator and qtest()
    sends lines of the qtest protocol."""

    def __init__(self, binary, args, name="vm", qtest=False):
        self.binary = binary
        self.args = list(args)
        self.name = name
        self.use_qtest = qtest
        self.qtest_sock = None
        self.tmp = tempfile.mkdtemp(prefix="qemu-irq-fork-")
        self.sock_path = os.path.join(self.tmp, "qmp.sock")
        self.log_path = os.path.join(self.tmp, "qemu.log")
        self.proc = None
        self.sock = None
        self.buf = b""

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.kill()

    def start(self):
        cmd = [self.binary] + self.args + [
            "-qmp", "unix:%s,server=on,wait=off" % self.sock_path]
        if self.use_qtest:
            self.qtest_path = os.path.join(self.tmp, "qtest.sock")
            cmd += ["-accel", "qtest", "-qtest",
                    "unix:%s,server=on,wait=off" % self.qtest_path]
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log)
        deadline = time.time() + 30
        while True:
            if self.proc.poll() is not None:
                raise QMPError("%s exited with %d: %s" % (
                    self.name, self.proc.returncode, self.output()))
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(self.sock_path)
                self.sock = s
                break
            except OSError:
                s.close()
                if time.time() > deadline:
                    raise QMPError("%s: no QMP socket" % self.name)
                time.sleep(0.05)
        self._recv()                       # greeting
        self.cmd("qmp_capabilities")
        if self.use_qtest:
            self.qtest_sock = socket.socket(socket.AF_UNIX,
                                            socket.SOCK_STREAM)
            self.qtest_sock.connect(self.qtest_path)
            self.qtest_buf = b""

    def qtest(self, line):
        """Send one qtest command; return the words of its OK reply."""
        self.qtest_sock.sendall(line.encode() + b"\n")
        while True:
            reply, self.qtest_buf = recv_line(self.qtest_sock, self.qtest_buf,
                                              "%s: qtest" % self.name)
            words = reply.decode().split()
            if words and words[0] == "IRQ":
                continue
            if not words or words[0] != "OK":
                raise QMPError("%s: qtest %r: %s" % (self.name, line,
                                                      reply.decode()))
            return words[1:]
    def output(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def quit(self, timeout=30):
        """Shut down through QMP and check QEMU exits cleanly."""
        try:
            self.cmd("quit")
        except QMPError:
            pass
        rc = self.proc.wait(timeout)
        self.sock.close()
        return rc

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
