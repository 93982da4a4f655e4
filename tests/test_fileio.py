"""Atomic writes (tinyalgo/runs/fileio.py): what is at the target is never lost or replaced by something else."""
import os
import socket
import stat

import pytest

from tinyalgo.runs.fileio import TEMP_PREFIX, NotAFileError, atomic_write_bytes


def test_a_write_through_a_symbolic_link_writes_the_file_it_points_to(tmp_path):
    (tmp_path / "kept").mkdir()
    target = tmp_path / "kept" / "report.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(os.path.join("kept", "report.json"))          # relative, as ln -s makes it
    atomic_write_bytes(link, b"new")
    assert link.is_symlink() and os.readlink(link) == os.path.join("kept", "report.json")
    assert target.read_bytes() == b"new"
    assert sorted(os.listdir(tmp_path / "kept")) == ["report.json"]            # no temporary file left
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "kept" / "later.json")
    atomic_write_bytes(dangling, b"made")
    assert dangling.is_symlink() and (tmp_path / "kept" / "later.json").read_bytes() == b"made"


def test_a_target_that_is_not_a_regular_file_is_refused_and_kept(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    sock = socket.socket(socket.AF_UNIX)
    sock_path = tmp_path / "s"
    try:
        sock.bind(str(sock_path))
    except OSError:                                       # no Unix sockets here: the FIFO and the folder suffice
        sock_path = None
    link = tmp_path / "to-fifo"
    link.symlink_to(fifo)
    for path, test in ((fifo, stat.S_ISFIFO), (folder, stat.S_ISDIR), (link, stat.S_ISFIFO),
                       (sock_path, stat.S_ISSOCK)):
        if path is None:
            continue
        with pytest.raises(NotAFileError, match=f"^cannot write {path}: it is a .*, not a regular file"):
            atomic_write_bytes(path, b"data")
        assert test(os.stat(path).st_mode)
    sock.close()
    assert not [name for name in os.listdir(tmp_path) if name.startswith(TEMP_PREFIX)]      # nothing written
