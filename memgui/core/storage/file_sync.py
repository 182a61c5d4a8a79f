"""Syncing a brain file to the disk through a connection's own handle to it.

A handle of memgui's own (`os.open`, `os.fsync`) cannot be closed again safely: closing any
descriptor of a file drops every POSIX lock this process holds on it, SQLite's included.
SQLite's handle is reached through its public API instead: `SQLITE_FCNTL_FILE_POINTER`
gives the connection's `sqlite3_file`, whose VFS method `xSync` is what a checkpoint calls
to sync the file (`fdatasync` on Linux, `FlushFileBuffers` on Windows).
"""

from __future__ import annotations

import ctypes
import logging

import apsw

log = logging.getLogger(__name__)

SQLITE_SYNC_NORMAL = 0x2

_SyncMethod = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int)


class _IoMethods(ctypes.Structure):
    # sqlite3.h's `sqlite3_io_methods`, as far as `xSync` (the struct is public and its
    # first members never moved: later versions only append).
    _fields_ = (
        ("iVersion", ctypes.c_int),
        ("xClose", ctypes.c_void_p),
        ("xRead", ctypes.c_void_p),
        ("xWrite", ctypes.c_void_p),
        ("xTruncate", ctypes.c_void_p),
        ("xSync", _SyncMethod),
    )


class _File(ctypes.Structure):
    _fields_ = (("pMethods", ctypes.POINTER(_IoMethods)),)  # sqlite3.h's `sqlite3_file`


def sync_main_file(conn: apsw.Connection) -> bool:
    """Sync `conn`'s main database file (its pages written so far reach the disk); whether
    it was synced. Calls SQLite's VFS on the connection's handle, from the calling thread
    (the GIL is released meanwhile): the connection must not be used by another thread."""
    handle = ctypes.c_void_p()
    try:
        found = conn.file_control("main", apsw.SQLITE_FCNTL_FILE_POINTER, ctypes.addressof(handle))
    except apsw.Error:
        return False
    if not found or not handle.value:
        return False
    methods = _File.from_address(handle.value).pMethods
    if not methods or not methods.contents.xSync:
        return False
    code = methods.contents.xSync(handle.value, SQLITE_SYNC_NORMAL)
    if code != apsw.SQLITE_OK:
        log.warning("syncing %s failed (SQLite code %d)", conn.filename, code)
        return False
    return True
