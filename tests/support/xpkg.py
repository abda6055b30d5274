"""What a built Crossplane package (``crossplane xpkg build``'s .xpkg, an OCI image tarball)
holds: its files by name, read from every layer. The function's package and the modules'
Configurations are checked through it."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path


def xpkg_files(path: Path) -> dict[str, bytes]:
    """Every file in the package at ``path`` (``package.yaml`` among them), by name."""
    files: dict[str, bytes] = {}
    with tarfile.open(path) as image:
        (manifest,) = json.load(image.extractfile("manifest.json"))  # type: ignore[arg-type]
        for layer in manifest["Layers"]:
            blob = image.extractfile(layer).read()  # type: ignore[union-attr]
            with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as contents:
                for member in contents.getmembers():
                    extracted = contents.extractfile(member)
                    if extracted is not None:
                        files[member.name] = extracted.read()
    return files
