"""bundle.py: a results folder packed and signed with an ed25519 key verifies; the same bundle
with one verdict changed, with its index changed, signed by another key, or with scores that
its own files do not give, is refused naming the reason."""
from __future__ import annotations

import hashlib
import io
import json
import subprocess
import tarfile

import pytest

import bundle
from cli import run_cli
from report_pipeline import pipeline


def keypair(path, kind: str = "ed25519"):
    subprocess.run(["ssh-keygen", "-q", "-t", kind, "-N", "", "-f", str(path)], check=True)
    return str(path), f"{path}.pub"


def members(path) -> dict[str, bytes]:
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}


def rewrite(path, files: dict[str, bytes]) -> None:
    with tarfile.open(path, "w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def resign(tmp_path, files: dict[str, bytes], key: str) -> None:
    """Sign the bundle's BUNDLE.json again with `key`, as someone holding it would."""
    index = tmp_path / "BUNDLE.json"
    index.write_bytes(files["BUNDLE.json"])
    sig = tmp_path / "BUNDLE.json.sig"
    sig.unlink(missing_ok=True)
    subprocess.run(["ssh-keygen", "-Y", "sign", "-q", "-f", key, "-n", "memory-bench", str(index)], check=True)
    files["BUNDLE.json.sig"] = sig.read_bytes()


def flip_one_verdict(files: dict[str, bytes]) -> str:
    name = next(n for n in files if n.startswith("verdicts/"))
    lines = files[name].decode().splitlines()
    v = json.loads(lines[0])
    v["verdict"] = "incorrect" if v["verdict"] == "correct" else "correct"
    files[name] = ("\n".join([json.dumps(v), *lines[1:]]) + "\n").encode()
    return name


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    """An answered comparison's results folder, packed and signed; (bundle, key, public key)."""
    tmp = tmp_path_factory.mktemp("bundle")
    with pytest.MonkeyPatch.context() as mp:
        paths = pipeline(tmp / "cmp", systems=("none", "oracle", "keyword", "hash"), monkeypatch=mp)
    key, pub = keypair(tmp / "alice")
    out = tmp / "cmp.bundle.tar"
    assert run_cli(bundle.main, ["pack", str(paths["results"]), "--key", key, "--out", str(out)]) == 0
    return out, key, pub


def verify(path, pub) -> int:
    return run_cli(bundle.main, ["verify", str(path), "--signer", pub])


def test_a_packed_results_folder_verifies(packed, capsys):
    out, _, pub = packed
    assert verify(out, pub) == 0
    said = capsys.readouterr().out
    assert "verified: signed by" in said and "score.py on them gives its scores.json" in said
    names = set(members(out))
    assert {"BUNDLE.json", "BUNDLE.json.sig", "scores.json"} <= names
    assert any(n.startswith("runs/") for n in names) and any(n.startswith("verdicts/") for n in names)


def test_one_verdict_changed_is_refused_naming_the_file(packed, tmp_path, capsys):
    out, _, pub = packed
    files = members(out)
    name = flip_one_verdict(files)
    changed = tmp_path / "changed.tar"
    rewrite(changed, files)
    assert verify(changed, pub) == 2
    assert f"{name} changed after it was signed" in capsys.readouterr().err


def test_an_index_changed_to_match_is_refused_by_its_signature(packed, tmp_path, capsys):
    out, _, pub = packed
    files = members(out)
    name = flip_one_verdict(files)
    index = json.loads(files["BUNDLE.json"])
    index["members"][name]["sha256"] = hashlib.sha256(files[name]).hexdigest()
    files["BUNDLE.json"] = json.dumps(index).encode()
    changed = tmp_path / "changed.tar"
    rewrite(changed, files)
    assert verify(changed, pub) == 2
    assert "its signature is not valid for its contents" in capsys.readouterr().err


def test_a_bundle_signed_by_another_key_is_refused_naming_that_key(packed, tmp_path, capsys):
    out, _, pub = packed
    mallory, _ = keypair(tmp_path / "mallory")
    files = members(out)
    resign(tmp_path, files, mallory)
    other = tmp_path / "other.tar"
    rewrite(other, files)
    assert verify(other, pub) == 2
    err = capsys.readouterr().err
    assert f"is not by the key in --signer {pub}: it was signed by ED25519 SHA256:" in err


def test_scores_its_own_files_do_not_give_are_refused_even_when_signed(packed, tmp_path, capsys):
    out, key, pub = packed
    files = members(out)
    name = flip_one_verdict(files)  # the signer changed a verdict and re-signed, keeping the scores
    index = json.loads(files["BUNDLE.json"])
    index["members"][name]["sha256"] = hashlib.sha256(files[name]).hexdigest()
    files["BUNDLE.json"] = json.dumps(index).encode()
    resign(tmp_path, files, key)
    forged = tmp_path / "forged.tar"
    rewrite(forged, files)
    assert verify(forged, pub) == 2
    err = capsys.readouterr().err
    assert "score.py on the bundle's own files gives other scores than its scores.json (first in 'differences')" \
        in err, err


def test_a_key_that_is_not_ed25519_is_refused(packed, tmp_path, capsys):
    out, _, _ = packed
    rsa, rsa_pub = keypair(tmp_path / "rsa", "rsa")
    assert verify(out, rsa_pub) == 2
    assert "not an ed25519 public key line" in capsys.readouterr().err


def test_a_folder_scored_with_its_checks_and_calibration_verifies(tmp_path, capsys):
    # make answers gives score.py --checks and --calibration: their summaries are in scores.json,
    # under the paths score.py was given, which the bundle's copies (side/) do not share.
    import check
    import judge
    from report_pipeline import score_again
    with pytest.MonkeyPatch.context() as mp:
        paths = pipeline(tmp_path / "cmp", systems=("none", "oracle", "keyword"), monkeypatch=mp)
    results = paths["results"]
    checks, calibration = str(results / "checks.json"), str(results / "calibration.json")
    assert run_cli(judge.main, ["--config", paths["config"], "--calibrate", "data/calibration.jsonl",
                                "--out", calibration]) == 0
    assert run_cli(check.main, ["--runs", *paths["runs"], "--verdicts", paths["verdicts"], "--manifest",
                                paths["manifest"], "--config", paths["config"], "--out", checks]) in (0, 4)
    score_again(paths, "--checks", checks, "--calibration", calibration, resamples="200")
    key, pub = keypair(tmp_path / "alice")
    out = tmp_path / "cmp.bundle.tar"
    assert run_cli(bundle.main, ["pack", str(results), "--key", key, "--out", str(out)]) == 0
    assert {"side/checks.json", "side/calibration.json"} <= set(members(out))
    capsys.readouterr()
    assert verify(out, pub) == 0, capsys.readouterr().err
