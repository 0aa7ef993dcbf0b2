"""A PEP 517 build backend for the attnplay Python package, standard library only.

pip builds a package in an isolated environment into which it installs the
backend the package names; setuptools or flit would come from PyPI, which a
machine without the index (this project's CI, an offline laptop) cannot
reach. This backend builds the wheel (and an sdist) of ``attnplay/`` itself:
the package's modules and ``attnplay/static/`` (the widget's page templates
and the version, written by the project's ``npm run build``), or for
``pip install -e`` a wheel that points at this folder. The version is the npm
package's (``attnplay/static/version.txt``).
Not here: the package (``attnplay/``).
"""
import base64
import hashlib
import io
import os
import tarfile
import zipfile

NAME = 'attnplay'
HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, NAME)
TAG = 'py3-none-any'


def _version():
    path = os.path.join(PACKAGE, 'static', 'version.txt')
    if not os.path.exists(path):
        raise RuntimeError(f'{path} is missing: build the widget first (`npm run build` in the attnplay repository), then install')
    with open(path, encoding='utf-8') as file:
        return file.read().strip()


def _files():
    """(path inside the wheel, path on disk) of the package's modules and data, sorted."""
    found = []
    for folder, dirs, names in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__')
        for name in sorted(names):
            if name.endswith(('.pyc', '.pyo')):
                continue
            path = os.path.join(folder, name)
            found.append((os.path.relpath(path, HERE).replace(os.sep, '/'), path))
    for required in ('notebook-page.html', 'attention-page.html', 'live-page.html'):
        if not os.path.exists(os.path.join(PACKAGE, 'static', required)):
            raise RuntimeError(f'attnplay/static/{required} is missing: run `npm run build` in the attnplay repository first')
    return found


def _metadata(version):
    with open(os.path.join(HERE, 'README.md'), encoding='utf-8') as file:
        readme = file.read()
    return (f'Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n'
            'Summary: Attention views for notebooks (bertviz- and CircuitsVis-compatible) drawn offline by attnplay\'s widget\n'
            'License: MIT\nRequires-Python: >=3.9\nDescription-Content-Type: text/markdown\n\n' + readme)


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode('ascii')
    return f'{name},sha256={digest},{len(data)}'


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    entries = []
    for name, path in _files():
        with open(path, 'rb') as file:
            entries.append((name, file.read()))
    return _write_wheel(wheel_directory, entries)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """`pip install -e ./python`: a wheel whose .pth file puts this folder on sys.path, so the package (and the
    static/ that `npm run build` writes) is read where it is."""
    _files()  # the same checks: the widget must have been built
    return _write_wheel(wheel_directory, [(f'_{NAME}_editable.pth', (HERE + '\n').encode('utf-8'))])


def _write_wheel(wheel_directory, entries):
    """The wheel of `entries` ((name, bytes) of its files) with its dist-info; returns its file name."""
    version = _version()
    dist_info = f'{NAME}-{version}.dist-info'
    wheel_name = f'{NAME}-{version}-{TAG}.whl'
    entries = list(entries)
    entries.append((f'{dist_info}/METADATA', _metadata(version).encode('utf-8')))
    entries.append((f'{dist_info}/WHEEL', f'Wheel-Version: 1.0\nGenerator: attnplay build_backend\nRoot-Is-Purelib: true\nTag: {TAG}\n'.encode('ascii')))
    record = [_record_line(name, data) for name, data in entries] + [f'{dist_info}/RECORD,,']
    entries.append((f'{dist_info}/RECORD', ('\n'.join(record) + '\n').encode('utf-8')))
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), 'w', zipfile.ZIP_DEFLATED) as wheel:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    version = _version()
    base = f'{NAME}-{version}'
    sdist_name = f'{base}.tar.gz'
    extra = [(name, os.path.join(HERE, name)) for name in ('pyproject.toml', 'build_backend.py', 'README.md')]
    with tarfile.open(os.path.join(sdist_directory, sdist_name), 'w:gz', format=tarfile.PAX_FORMAT) as sdist:
        for name, path in extra + _files():
            sdist.add(path, arcname=f'{base}/{name}', recursive=False)
        info = tarfile.TarInfo(f'{base}/PKG-INFO')
        data = _metadata(version).encode('utf-8')
        info.size = len(data)
        sdist.addfile(info, io.BytesIO(data))
    return sdist_name
