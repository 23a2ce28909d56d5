"""A minimal inotify(7) reader (ctypes, Linux) for the crash test: it sees every file
created or renamed into a watched directory, so the test can kill flashtickd the
moment a checkpoint's temporary file appears and can list every checkpoint file a
restarted server writes, without the misses of polling a directory listing."""
import ctypes
import ctypes.util
import os
import select
import struct

IN_CREATE = 0x00000100
IN_MOVED_TO = 0x00000080
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
_EVENT = struct.Struct("iIII")

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


class Watch:
    def __init__(self):
        self.fd = _libc.inotify_init1(IN_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.dirs = {}  # wd -> path

    def add(self, path):
        if path in self.dirs.values():
            return
        wd = _libc.inotify_add_watch(self.fd, os.fsencode(path), IN_CREATE | IN_MOVED_TO)
        if wd < 0:
            raise OSError(ctypes.get_errno(), "inotify_add_watch " + path)
        self.dirs[wd] = path

    def read(self, timeout):
        """Events within `timeout` seconds: a list of (kind, path), kind 'create' or
        'moved_to'. New subdirectories are watched as they appear."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return []
        try:
            buf = os.read(self.fd, 65536)
        except BlockingIOError:
            return []
        out = []
        i = 0
        while i + _EVENT.size <= len(buf):
            wd, mask, _, length = _EVENT.unpack_from(buf, i)
            name = buf[i + _EVENT.size:i + _EVENT.size + length].rstrip(b"\0").decode()
            i += _EVENT.size + length
            path = os.path.join(self.dirs.get(wd, "?"), name)
            if mask & IN_ISDIR:
                if mask & (IN_CREATE | IN_MOVED_TO):
                    self.add(path)
                continue
            out.append(("moved_to" if mask & IN_MOVED_TO else "create", path))
        return out

    def close(self):
        os.close(self.fd)
