"""Helpers of the Python tests: the gocaffe command and scratch folders."""

import os
import shutil
import subprocess
import tempfile
import unittest


def gocaffe_bin():
    """The gocaffe command the Go test built (GOCAFFE_BIN), with the python
    tag; None when the tests run without it."""
    b = os.environ.get('GOCAFFE_BIN')
    return b if b and os.path.exists(b) else None


def run_gocaffe(args, env=None, cwd=None):
    """Runs the gocaffe command; returns its stderr (the log), raising on
    failure with it."""
    b = gocaffe_bin()
    if b is None:
        raise unittest.SkipTest('GOCAFFE_BIN names no gocaffe command (the Go test TestPython sets it)')
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([b] + list(args), env=e, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        raise AssertionError('gocaffe %s: exit %d\n%s\n%s' % (' '.join(args), p.returncode, p.stdout, p.stderr))
    return p.stderr


class TempDirTest(unittest.TestCase):
    """A test with a scratch folder, self.dir, removed afterwards."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='gocaffe-pytest-')

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def write(self, name, text):
        p = self.path(name)
        with open(p, 'w') as f:
            f.write(str(text))
        return p
