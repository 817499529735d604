"""Copy the photos `benchmarks/ptq.py` calibrates and evaluates on (public domain, CC0
or BSD-3-Clause) out of scikit-image's sample data into a folder (they are not in this
repository).

scikit-image ships them in its ``data`` folder (``skimage/data`` in the wheel and in
older checkouts, ``src/_skimage2/data`` in newer ones); the licence of each is in the
docstring of its loader in that folder's ``_fetchers.py``, or, where that states none
(the two scanned / rendered text pages), the repository's own (``Files: *`` of its
``LICENSE.txt``: BSD-3-Clause). Sources, first found wins:

- ``--from DIR``: a scikit-image checkout (work tree or bare git directory, read with
  ``git show HEAD:<path>``) or a folder holding the files;
- the installed ``scikit-image`` package's data folder.

Run: ``python benchmarks/get_photos.py --from ~/src/scikit-image --to photos`` (get the
checkout with ``git clone --depth 1 https://github.com/scikit-image/scikit-image``), then
``python -m benchmarks.ptq --photos photos``.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
from pathlib import Path

#: file name -> licence, as scikit-image's ``_fetchers.py`` states it (or the
#: repository's licence where the loader states none; ``bw_text.png`` has no loader).
PHOTOS: dict[str, str] = {
    "astronaut.png": "public domain (NASA)",
    "chelsea.png": "CC0 (Stefan van der Walt)",
    "rocket.jpg": "public domain (SpaceX)",
    "text.png": "public domain",
    "coffee.png": "CC0 (Rachel Michetti)",
    "camera.png": "CC0 (Lav Varshney)",
    "hubble_deep_field.jpg": "public domain (NASA)",
    "retina.jpg": "CC0 1.0",
    "brick.png": "CC0 (CC0Textures)",
    "gravel.png": "CC0 (CC0Textures)",
    "grass.png": "CC0",
    "clock_motion.png": "public domain (Stefan van der Walt)",
    "page.png": "BSD-3-Clause (scikit-image repository licence)",
    "bw_text.png": "BSD-3-Clause (scikit-image repository licence)",
}

#: Where the data folder lies inside a scikit-image checkout, newest layout first.
DATA_FOLDERS = ("src/_skimage2/data", "src/skimage/data", "skimage/data")


def _from_git(repo: Path, name: str) -> bytes | None:
    """The file `name` of a scikit-image git repository's HEAD, or None."""
    for folder in DATA_FOLDERS:
        done = subprocess.run(
            ["git", f"--git-dir={repo}", "show", f"HEAD:{folder}/{name}"],
            capture_output=True,
            check=False,
        )
        if done.returncode == 0:
            return done.stdout
    return None


def _from_folder(root: Path, name: str) -> bytes | None:
    """The file `name` under `root` (itself or one of its data folders), or None."""
    for folder in (Path("."), *map(Path, DATA_FOLDERS)):
        path = root / folder / name
        if path.is_file():
            return path.read_bytes()
    return None


def _installed_data() -> Path | None:
    """The installed scikit-image's data folder, if there is one."""
    spec = importlib.util.find_spec("skimage")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "data"


def find_photo(name: str, source: Path | None) -> bytes | None:
    """The bytes of photo `name` from `source` or the installed scikit-image."""
    if source is not None:
        git_dir = source / ".git" if (source / ".git").exists() else source
        if (git_dir / "HEAD").is_file():
            found = _from_git(git_dir, name)
            if found is not None:
                return found
        found = _from_folder(source, name)
        if found is not None:
            return found
    installed = _installed_data()
    return _from_folder(installed, name) if installed is not None else None


def main() -> None:
    """Copy every photo of `PHOTOS` that can be found; name the missing ones."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="source", type=Path, default=None)
    parser.add_argument("--to", type=Path, required=True)
    args = parser.parse_args()
    args.to.mkdir(parents=True, exist_ok=True)
    missing = []
    for name, licence in PHOTOS.items():
        data = find_photo(name, args.source)
        if data is None:
            missing.append(name)
            continue
        (args.to / name).write_bytes(data)
        print(f"{name}: {len(data)} bytes, {licence}")
    if missing:
        raise SystemExit(f"not found: {', '.join(missing)}")


if __name__ == "__main__":
    main()
