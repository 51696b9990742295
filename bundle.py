"""A results folder packed into one file signed with your ed25519 key, and a check anyone can
run on it: that you signed it, that no file in it changed, and that its scores are what
score.py makes of its own files.

  python bundle.py pack results/RUN --key ~/.ssh/id_ed25519
  python bundle.py verify results/RUN/RUN.bundle.tar --signer alice.pub [--dataset PATH]

pack reads the folder's scores.json and takes what it was made from: the manifest, the run
files and the verdicts its `inputs` name (each held to the sha256 score.py recorded), and the
folder's checks.json, calibration.json and audit.json when the scores include them. It writes
one tar (default FOLDER/RUN.bundle.tar): those files, BUNDLE.json (every member's sha256 and
size, the dataset's sha256, score.py's options) and BUNDLE.json.sig, OpenSSH's signature of
BUNDLE.json (`ssh-keygen -Y sign`, namespace memory-bench) with the key, which must be ed25519.
The dataset is not packed (a benchmark's licence may not allow it): the verifier has it, as the
manifest names it, or passes --dataset.

verify checks, in this order, and stops at the first that fails (exit 2, the reason named):
  1. the signature over BUNDLE.json is by the public key --signer gives (an ed25519 .pub line);
  2. every member hashes to what BUNDLE.json says, and none is missing or extra;
  3. score.py, run on the bundle's own files with the options BUNDLE.json records, writes the
     numbers of the bundled scores.json (the files' paths aside).
Exit 0 when all three hold. ssh-keygen (OpenSSH 8.1 or later) does the signing.
"""
from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tarfile
import tempfile
from datetime import datetime, timezone

from cli import EXIT_OK, InputError, run_cli
from config import ROOT
from fileio import indented_json, loads, output_path, read_json, sha256_file, write_atomic
from formats import SCORES_FORMAT, check_format

BUNDLE_FORMAT = "bundle/1"
NAMESPACE = "memory-bench"  # what the signature is for: an ssh signature of another use does not verify
INDEX, SIGNATURE = "BUNDLE.json", "BUNDLE.json.sig"
# The folder's files a scores.json may have been made with (score.py --checks, --calibration,
# --audit); the scores say which (their checks, calibration and audit fields are not null).
SIDE_FILES = ("checks", "calibration", "audit")


def ssh_keygen(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """ssh-keygen with these arguments; InputError when it is not installed."""
    try:
        return subprocess.run(["ssh-keygen", *args], input=stdin, capture_output=True, timeout=60)
    except FileNotFoundError:
        raise InputError("ssh-keygen is not installed: it signs and verifies bundles (install OpenSSH's client, "
                         "e.g. the openssh-client package)") from None


def found(path: str) -> str:
    """A path as score.py was given it: from here, else from the repository's root."""
    if os.path.isabs(path) or os.path.exists(path):
        return path
    return os.path.join(ROOT, path)


def member_name(path: str, folder: str) -> str:
    """Where a file goes in the bundle: its path as score.py was given it, when that is relative
    and stays inside (so score.py on the unpacked bundle writes the same `inputs`), else
    folder/its name."""
    norm = os.path.normpath(path)
    if os.path.isabs(norm) or norm.startswith(".."):
        return f"{folder}/{os.path.basename(norm)}"
    return norm.replace(os.sep, "/")


def contents(folder: str, scores: dict) -> dict[str, str]:
    """The bundle's members: name in the bundle -> file here. Every input scores.json names must
    hash to what it recorded, since a bundle of other files would not be these scores'."""
    inputs = scores["inputs"]
    if not inputs["manifest"]:
        raise InputError(f"{folder}/scores.json was made without --manifest: a bundle records the code and the "
                         f"dataset through it; rerun score.py with --manifest")
    members = {"scores.json": os.path.join(folder, "scores.json"),
               member_name(inputs["manifest"], "results"): found(inputs["manifest"])}
    for kind in ("runs", "verdicts"):
        for path, sha in inputs[kind].items():
            here = found(path)
            if not os.path.exists(here):
                raise InputError(f"{path}: named by {folder}/scores.json ({kind}), not found")
            if sha256_file(here) != sha:
                raise InputError(f"{path}: changed since score.py read it (sha256 {sha[:12]} recorded); rerun score.py")
            members[member_name(path, kind)] = here
    for kind in SIDE_FILES:
        if scores[kind] is not None:
            path = os.path.join(folder, f"{kind}.json")
            if not os.path.exists(path):
                raise InputError(f"{path}: {folder}/scores.json includes the {kind}, but its file is not in the folder")
            members[f"side/{kind}.json"] = path
    return members


def index(members: dict[str, str], scores: dict, manifest: dict) -> dict:
    """BUNDLE.json: what the bundle holds and how its scores were made."""
    return {"format": BUNDLE_FORMAT, "created_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "run_id": manifest["run_id"], "dataset": manifest["dataset"], "dataset_sha256": manifest["dataset_sha256"],
            "score_options": {"baseline": scores["baseline"], "resamples": scores["resamples"], "seed": scores["seed"],
                              "allow_partial": scores["coverage"]["partial"]},
            "members": {name: {"sha256": sha256_file(path), "bytes": os.path.getsize(path)}
                        for name, path in sorted(members.items())}}


def add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    """One member with no owner or time of its own: the same files make the same tar."""
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o644, 0
    tar.addfile(info, io.BytesIO(data))


def pack(folder: str, key: str, out: str | None) -> int:
    scores = read_json(os.path.join(folder, "scores.json"), "scores of score.py", ("format", "inputs"))
    check_format(scores, SCORES_FORMAT, os.path.join(folder, "scores.json"), "rerun score.py")
    members = contents(folder, scores)
    manifest = read_json(found(scores["inputs"]["manifest"]), "manifest of manifest.py",
                         ("run_id", "dataset", "dataset_sha256"))
    out = output_path(out or os.path.join(folder, f"{manifest['run_id']}.bundle.tar"), "--out")
    if not os.path.exists(key):
        raise InputError(f"--key {key}: no such file (your ed25519 private key, e.g. ~/.ssh/id_ed25519)")
    with tempfile.TemporaryDirectory() as tmp:
        index_path = os.path.join(tmp, INDEX)
        with open(index_path, "w", encoding="utf-8") as fh:
            fh.write(indented_json(index(members, scores, manifest)) + "\n")
        signed = ssh_keygen("-Y", "sign", "-q", "-f", key, "-n", NAMESPACE, index_path)
        if signed.returncode != 0:
            raise InputError(f"--key {key}: ssh-keygen could not sign with it: "
                             f"{signed.stderr.decode(errors='replace').strip()}")
        signer = signature_key(index_path + ".sig", index_path)
        if not signer.startswith("ED25519 "):
            raise InputError(f"--key {key}: is a {signer.split()[0]} key; a bundle is signed with an ed25519 key "
                             f"(ssh-keygen -t ed25519)")
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name in (INDEX, SIGNATURE):
                with open(os.path.join(tmp, name if name == INDEX else INDEX + ".sig"), "rb") as fh:
                    add(tar, name, fh.read())
            for name, path in sorted(members.items()):
                with open(path, "rb") as fh:
                    add(tar, name, fh.read())
    write_atomic(out, buf.getvalue())
    print(f"wrote {out}: {len(members)} files signed by {signer}")
    return EXIT_OK


def signature_key(sig: str, signed: str) -> str:
    """The key a signature was made with, as ssh-keygen names it ('ED25519 SHA256:...'), whether
    or not anyone allows it."""
    with open(signed, "rb") as fh:
        r = ssh_keygen("-Y", "check-novalidate", "-n", NAMESPACE, "-s", sig, stdin=fh.read())
    said = (r.stdout.decode(errors="replace") + r.stderr.decode(errors="replace")).strip()
    words = said.split()
    if r.returncode != 0 or "key" not in words[1:-1]:
        raise InputError(f"{INDEX}: its signature is not valid for its contents ({said})")
    at = words.index("key")  # 'Good "memory-bench" signature with ED25519 key SHA256:...'
    return f"{words[at - 1]} {words[at + 1]}"


def verify(path: str, signer: str, dataset: str | None) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        names = unpack(path, tmp)
        check_signature(path, tmp, signer)
        with open(os.path.join(tmp, INDEX), "rb") as fh:
            idx = loads(fh.read())
        check_members(path, tmp, idx, names)
        check_scores(path, tmp, idx, dataset)
    print(f"{path}: verified: signed by {signer}'s key, {len(idx['members'])} files as signed, and score.py on them "
          f"gives its scores.json")
    return EXIT_OK


def unpack(path: str, tmp: str) -> list[str]:
    """Unpack the bundle's regular files into tmp; their names. A member that would land outside
    tmp, or is not a plain file, is refused."""
    try:
        tar = tarfile.open(path, mode="r:")
    except (OSError, tarfile.TarError) as e:
        raise InputError(f"{path}: not a bundle ({e})") from None
    with tar:
        members = tar.getmembers()
        for m in members:
            if not m.isfile() or os.path.isabs(m.name) or ".." in m.name.split("/"):
                raise InputError(f"{path}: member {m.name!r} is not a plain file inside the bundle")
        tar.extractall(tmp, filter="data")
    return [m.name for m in members]


def check_signature(path: str, tmp: str, signer: str) -> None:
    """1. BUNDLE.json signed by the --signer key, in the memory-bench namespace."""
    try:
        with open(signer, encoding="utf-8") as fh:
            pub = fh.read().split()
    except OSError as e:
        raise InputError(f"--signer {signer}: cannot open: {e.strerror}") from None
    if len(pub) < 2 or pub[0] != "ssh-ed25519":
        raise InputError(f"--signer {signer}: not an ed25519 public key line (ssh-ed25519 AAAA...)")
    for name in (INDEX, SIGNATURE):
        if not os.path.exists(os.path.join(tmp, name)):
            raise InputError(f"{path}: has no {name}; it is not a signed bundle")
    allowed = os.path.join(tmp, ".allowed_signers")
    with open(allowed, "w", encoding="utf-8") as fh:
        fh.write(f'signer namespaces="{NAMESPACE}" {pub[0]} {pub[1]}\n')
    with open(os.path.join(tmp, INDEX), "rb") as fh:
        r = ssh_keygen("-Y", "verify", "-f", allowed, "-I", "signer", "-n", NAMESPACE,
                       "-s", os.path.join(tmp, SIGNATURE), stdin=fh.read())
    if r.returncode != 0:
        try:
            by = f"it was signed by {signature_key(os.path.join(tmp, SIGNATURE), os.path.join(tmp, INDEX))}"
        except InputError:
            by = "its signature is not valid for its contents"
        raise InputError(f"{path}: the signature of {INDEX} is not by the key in --signer {signer}: {by}")


def check_members(path: str, tmp: str, idx: dict, names: list[str]) -> None:
    """2. Every member as BUNDLE.json lists it, none missing, none extra."""
    listed = set(idx["members"])
    present = set(names) - {INDEX, SIGNATURE}
    if present - listed:
        raise InputError(f"{path}: holds {sorted(present - listed)[0]}, which {INDEX} does not list")
    if listed - present:
        raise InputError(f"{path}: {INDEX} lists {sorted(listed - present)[0]}, which the bundle does not hold")
    for name, want in sorted(idx["members"].items()):
        got = sha256_file(os.path.join(tmp, name))
        if got != want["sha256"]:
            raise InputError(f"{path}: {name} changed after it was signed (sha256 {got[:12]}, signed "
                             f"{want['sha256'][:12]})")


def comparable(scores: dict) -> dict:
    """scores.json without where its files were: their sha256 stay, as the numbers do."""
    out = dict(scores)
    inputs = scores["inputs"]
    out["inputs"] = {"dataset_sha256": inputs["dataset_sha256"], "runs": sorted(inputs["runs"].values()),
                     "verdicts": sorted(inputs["verdicts"].values())}
    out["left_out"] = [{**lo, "file": os.path.basename(lo["file"])} for lo in scores["left_out"]]
    for kind in SIDE_FILES:  # read from side/KIND.json here, from the results folder when scored
        if scores[kind] is not None:
            out[kind] = {k: v for k, v in scores[kind].items() if k != "file"}
    return out


def check_scores(path: str, tmp: str, idx: dict, dataset: str | None) -> None:
    """3. score.py on the bundle's files, with its recorded options, gives the bundled scores."""
    with open(os.path.join(tmp, "scores.json"), "rb") as fh:
        bundled = loads(fh.read())
    inputs, opts = bundled["inputs"], idx["score_options"]
    manifest = member_name(inputs["manifest"], "results")
    args = [sys.executable, os.path.join(ROOT, "score.py"), "--manifest", manifest,
            "--runs", *[member_name(p, "runs") for p in inputs["runs"]],
            "--baseline", opts["baseline"], "--resamples", str(opts["resamples"]), "--seed", str(opts["seed"]),
            "--json", os.path.join(tmp, ".rescored.json")]
    args += ["--verdicts", *[member_name(p, "verdicts") for p in inputs["verdicts"]]] if inputs["verdicts"] else []
    args += [x for kind in SIDE_FILES if f"side/{kind}.json" in idx["members"]
             for x in (f"--{kind}", f"side/{kind}.json")]
    args += ["--allow-partial"] if opts["allow_partial"] else []
    args += ["--dataset", os.path.abspath(dataset)] if dataset else []
    r = subprocess.run(args, cwd=tmp, capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        raise InputError(f"{path}: score.py could not score the bundle's files: {r.stderr.strip()}")
    with open(os.path.join(tmp, ".rescored.json"), "rb") as fh:
        rescored = loads(fh.read())
    a, b = comparable(bundled), comparable(rescored)
    if a != b:
        field = next(k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k))
        raise InputError(f"{path}: score.py on the bundle's own files gives other scores than its scores.json "
                         f"(first in '{field}'): the scores were not made from these files"
                         + other_code(os.path.join(tmp, manifest)))


def other_code(manifest: str) -> str:
    """When this checkout is not the commit the manifest recorded, the words saying so: another
    score.py may score the same files otherwise, and the reviewer should check that commit out."""
    with open(manifest, "rb") as fh:
        recorded = loads(fh.read()).get("git_commit")
    r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    here = r.stdout.strip() if r.returncode == 0 else None
    if recorded and here and recorded != here:
        return (f", or this code (commit {here[:12]}) scores them otherwise than the code that made them "
                f"(commit {recorded[:12]}): verify from a checkout of that commit")
    return ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="pack a results folder into one signed file")
    p.add_argument("folder", help="a results folder holding scores.json (results/RUN, or results/RUN/model-free)")
    p.add_argument("--key", required=True, help="your ed25519 private key (e.g. ~/.ssh/id_ed25519)")
    p.add_argument("--out", help="the bundle to write (default FOLDER/RUN_ID.bundle.tar)")
    v = sub.add_parser("verify", help="check a bundle's signature, its files and its scores")
    v.add_argument("bundle")
    v.add_argument("--signer", required=True, help="the signer's ed25519 public key (a .pub file)")
    v.add_argument("--dataset", help="where the manifest's dataset is here, when not where it names it")
    a = ap.parse_args(argv)
    if a.command == "pack":
        return pack(a.folder, a.key, a.out)
    return verify(a.bundle, a.signer, a.dataset)


if __name__ == "__main__":
    sys.exit(run_cli(main))
