#!/usr/bin/python3
"""Makes models/sample-pictures/: the photographs the playground offers a
vision model that has no samples of its own (the hub's ViT, DeiT, DINOv2),
taken from scikit-image's sample data as Debian packages it (python3-skimage),
each with its source and licence (public domain or CC0; see pictures.json).

The package is downloaded with `apt-get download` and unpacked with
`dpkg-deb -x` into a scratch folder, not installed (it pulls in 160 packages);
Pillow (python3-pil, the goldens profile of scripts/ensure-deps.sh) scales
each picture to at most 384 pixels on its longer side with its LANCZOS filter
and writes it as a JPEG of quality 90. Run from anywhere:
    /usr/bin/python3 scripts/make-sample-pictures.py
Not here: the models' own samples (models/<name>/samples/, from their training scripts).
"""
import glob
import json
import pathlib
import subprocess
import tempfile

from PIL import Image

REPO = pathlib.Path(__file__).resolve().parent.parent
OUT = REPO / "models" / "sample-pictures"
LONGER_SIDE = 384

# file in skimage/data -> what it shows, who made it, and its licence (skimage/data/_fetchers.py's notes).
PICTURES = [
    {"source": "chelsea.png", "file": "cat.jpg", "title": "Chelsea the cat",
     "credit": "Stefan van der Walt", "licence": "CC0 1.0 (no copyright restrictions)"},
    {"source": "coffee.png", "file": "coffee.jpg", "title": "A cup of coffee (Pikolo Espresso Bar)",
     "credit": "Rachel Michetti", "licence": "CC0 1.0 (no copyright restrictions)"},
    {"source": "astronaut.png", "file": "astronaut.jpg", "title": "Eileen Collins, astronaut",
     "credit": "NASA", "licence": "public domain (no known copyright restrictions)"},
    {"source": "rocket.jpg", "file": "rocket.jpg", "title": "A Falcon 9 rocket on its pad",
     "credit": "SpaceX", "licence": "public domain (released by SpaceX)"},
]


def main():
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(["apt-get", "download", "python3-skimage"], cwd=scratch, check=True)
        package = glob.glob(f"{scratch}/python3-skimage_*.deb")[0]
        subprocess.run(["dpkg-deb", "-x", package, f"{scratch}/root"], check=True)
        version = pathlib.Path(package).name.split("_")[1]
        data = pathlib.Path(glob.glob(f"{scratch}/root/usr/lib/python3*/dist-packages/skimage/data")[0])
        OUT.mkdir(parents=True, exist_ok=True)
        listed = []
        for entry in PICTURES:
            picture = Image.open(data / entry["source"]).convert("RGB")
            scale = LONGER_SIDE / max(picture.size)
            if scale < 1:
                picture = picture.resize((round(picture.width * scale), round(picture.height * scale)), Image.LANCZOS)
            picture.save(OUT / entry["file"], quality=90)
            listed.append({**entry, "source": f"scikit-image {version} (Debian python3-skimage), skimage/data/{entry['source']}",
                           "width": picture.width, "height": picture.height})
        (OUT / "pictures.json").write_text(json.dumps(listed, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {len(listed)} pictures to {OUT}")


if __name__ == "__main__":
    main()
