"""Streaming upload of a 1 GiB video through the real server vs. a plain file copy (issue 5).

Starts Pressroom (uvicorn, one process, fresh PostgreSQL database, local media storage) and
uploads one video of exactly the video size limit, 1 GiB, from a streaming client (the kernel
sends the file, `socket.sendfile`). Nothing is pinned by default: the kernel places the server's
threads, the client and the copy on the machine's cores, as it does for `pressroom serve`;
`--server-cpus 0` pins the servers to CPU 0 and the client to CPU 1 (the one-core figure).
Beside each upload, in the same run and on the same disk, a plain copy of the same file
(`shutil.copyfile`, then fsync, as the server fsyncs what it stores). Reports both throughputs,
their ratio, and the peak RSS growth of the server process during the upload (VmHWM after,
minus VmRSS before, with the high-water mark reset through /proc/<pid>/clear_refs just before
the upload).

The video is honest: about 1 GiB of real MPEG-4 part 2 intra frames (1280x720 noise at the
finest quantizer, ~1.1 MiB each), encoded once and muxed again and again with advancing
timestamps, so every one of its ~900 frames decodes; a `free` box pads the file to exactly
1 GiB. The server demuxes every packet of it and decodes the first, like any upload.

    uv run python bench/bench_media.py [--size-mib 1024] [--rounds 3] [--server-cpus 0]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import shutil
import socket
import statistics
import struct
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT
from common import SERVER_KEY
from common import free_port
from common import fresh_postgres_database
from common import server

MiB = 1024 * 1024
RESULTS = ROOT / "bench" / "results"
WORK = RESULTS / "media-data"
BOUNDARY = "pressroom-bench-boundary-5f1c2a"


# -- the video ------------------------------------------------------------------------------------


def make_video(path: Path, size: int) -> None:
    """An MP4 of exactly `size` bytes whose frames are all real, decodable video."""
    import av
    from av.video.stream import VideoStream

    fps = 30
    frames: list[bytes] = []
    with av.open(str(path), "w", format="mp4") as container:
        stream = container.add_stream("mpeg4", rate=fps)
        assert isinstance(stream, VideoStream)
        stream.width, stream.height, stream.pix_fmt = 1280, 720, "yuv420p"
        stream.gop_size = 1  # every frame a key frame: any of them can be repeated
        stream.bit_rate = 400_000_000
        stream.options = {"qscale": "1"}
        # Eight different frames, or one for a small file (each is ~1.1 MiB).
        for index in range(8 if size >= 64 * MiB else 1):
            frame = av.VideoFrame(1280, 720, "yuv420p")
            for plane in frame.planes:
                plane.update(os.urandom(plane.buffer_size))
            frame.pts = index
            for packet in stream.encode(frame):
                frames.append(bytes(packet))
                container.mux(packet)
        for packet in stream.encode(None):
            frames.append(bytes(packet))
            container.mux(packet)
        written = sum(len(f) for f in frames)
        index = len(frames)
        # Leave room for the index (`moov`, ~16 bytes per frame) and the padding box.
        while written + len(frames[index % len(frames)]) + 64 * 1024 < size:
            data = frames[index % len(frames)]
            packet = av.Packet(data)
            packet.stream = stream
            packet.time_base = Fraction(1, fps)
            packet.pts = packet.dts = index
            packet.duration = 1
            packet.is_keyframe = True
            container.mux(packet)
            written += len(data)
            index += 1
    padding = size - path.stat().st_size
    if padding < 8:
        raise RuntimeError(f"the video came out {8 - padding} bytes too large to pad")
    with path.open("ab") as out:
        out.write(struct.pack(">I", padding) + b"free")
        out.write(bytes(padding - 8))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while chunk := source.read(8 * MiB):
            digest.update(chunk)
    return digest.hexdigest()


# -- the measurements -----------------------------------------------------------------------------


def timed_copy(source: Path, target: Path) -> float:
    """Seconds for a plain copy of `source` (what `cp` does: in-kernel), made durable like the
    server's stored file."""
    started = time.perf_counter()
    shutil.copyfile(source, target)
    with target.open("rb") as copied:
        os.fsync(copied.fileno())
    elapsed = time.perf_counter() - started
    target.unlink()
    return elapsed


def memory_kib(pid: int) -> dict[str, int]:
    figures = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            figures[name] = int(value.split()[0])
    return figures


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process, all its threads included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Measured:
    seconds: float
    rss_growth_kib: int
    server_cpu_seconds: float
    body: dict[str, Any]


def stream_post(port: int, path: str, headers: dict[str, str], file: Path, filename: str) -> bytes:
    """POST `file` as one `files` part, streamed: the kernel sends the file (`sendfile`), so the
    client costs next to nothing and never holds the file. Returns the response body."""
    head = (
        f"--{BOUNDARY}\r\n"
        f'Content-Disposition: form-data; name="files"; filename="{filename}"\r\n'
        "Content-Type: video/mp4\r\n\r\n"
    ).encode()
    tail = f"\r\n--{BOUNDARY}--\r\n".encode()
    length = len(head) + file.stat().st_size + len(tail)
    request = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", f"Content-Length: {length}"]
    request += [f"{name}: {value}" for name, value in headers.items()]
    request.append(f"Content-Type: multipart/form-data; boundary={BOUNDARY}")
    with socket.create_connection(("127.0.0.1", port)) as sock, file.open("rb") as source:
        sock.sendall(("\r\n".join(request) + "\r\n\r\n").encode() + head)
        sock.sendfile(source)
        sock.sendall(tail)
        response = b""
        while b"\r\n\r\n" not in response:
            received = sock.recv(65536)
            if not received:
                raise RuntimeError("connection closed before the response")
            response += received
        head_part, _, body = response.partition(b"\r\n\r\n")
        lines = head_part.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        fields = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
        while len(body) < int(fields.get("content-length", "0")):
            body += sock.recv(65536)
    if status != 201:
        raise RuntimeError(f"{path} answered {status}: {body[:500]!r}")
    return body


def measured(pid: int, send: Callable[[], bytes]) -> Measured:
    """Run one request and what the server process spent on it: time, peak memory, CPU."""
    # Reset the high-water mark, so VmHWM afterwards is the peak during this request.
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    before = memory_kib(pid)["VmRSS"]
    cpu_before = cpu_seconds(pid)
    started = time.perf_counter()
    body = send()
    elapsed = time.perf_counter() - started
    return Measured(
        seconds=elapsed,
        rss_growth_kib=memory_kib(pid)["VmHWM"] - before,
        server_cpu_seconds=cpu_seconds(pid) - cpu_before,
        body=json.loads(body),
    )


async def make_key(database_url: str, data_dir: Path) -> str:
    from tests.factories import make_tenant

    from pressroom.config import Settings
    from pressroom.runtime import Runtime

    runtime = Runtime.build(
        Settings(database_url=database_url, data_dir=data_dir, secret_key=SERVER_KEY)
    )
    try:
        return (await make_tenant(runtime, name="Bench media")).key
    finally:
        await runtime.close()


def mib_s(size: int, seconds: list[float]) -> float:
    return size / MiB / statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--server-cpus",
        default="",
        help='the CPUs the servers run on, the client then on CPU 1: "0" (one core) or "0,1"; '
        "by default nothing is pinned, as `pressroom serve` runs",
    )
    args = parser.parse_args()
    size = args.size_mib * MiB
    sys.path.insert(0, str(ROOT))
    WORK.mkdir(parents=True, exist_ok=True)
    # With `--server-cpus`, the client (and the copy) on CPU 1.
    if args.server_cpus and (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, {1})

    video = WORK / f"bench-{args.size_mib}mib.mp4"
    if not video.exists() or video.stat().st_size != size:
        started = time.perf_counter()
        make_video(video, size)
        print(f"made {video.name} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    digest = sha256_of(video)
    small = WORK / "warm-up.mp4"
    make_video(small, 4 * MiB)

    from pressroom.media.inspect import inspect_file
    from pressroom.media.sniff import sniff

    with video.open("rb") as source:
        sniffed = sniff(source.read(4096))
    assert sniffed is not None
    started = time.perf_counter()
    info = inspect_file(video, sniffed)
    inspect_seconds = time.perf_counter() - started

    server_dir = WORK / "server"
    shutil.rmtree(server_dir, ignore_errors=True)
    copies: list[float] = []
    sinks: list[Measured] = []
    uploads: list[Measured] = []
    with fresh_postgres_database() as database_url:
        key = asyncio.run(make_key(database_url, server_dir))
        env = {
            "PRESSROOM_DATABASE_URL": database_url,
            "PRESSROOM_DATA_DIR": str(server_dir),
            "PRESSROOM_SECRET_KEY": SERVER_KEY,
            "PRESSROOM_RATE_LIMIT": "100000000/60",
        }
        sink_port, port = free_port(), free_port()
        auth = {"Authorization": f"Bearer {key}"}
        with (
            server(
                ["bench.upload_sink:app"], sink_port, {}, "/healthz", args.server_cpus
            ) as sink_process,
            server(
                ["--factory", "pressroom.app:create_app"], port, env, "/healthz", args.server_cpus
            ) as process,
        ):

            def sink() -> bytes:
                return stream_post(sink_port, "/sink", {}, video, video.name)

            def upload(file: Path = video) -> bytes:
                return stream_post(port, "/api/v1/media", auth, file, file.name)

            # Warm-up: imports, decoder libraries, thread pools, database connections.
            upload(small)
            stream_post(sink_port, "/sink", {}, small, small.name)
            # Interleaved rounds, so drift in the machine's speed hits all three alike.
            for _ in range(args.rounds):
                copies.append(timed_copy(video, WORK / "copy.mp4"))
                sinks.append(measured(sink_process.pid, sink))
                result = measured(process.pid, upload)
                [item] = result.body["items"]
                if item["sha256"] != digest or item["sizeBytes"] != size:
                    raise RuntimeError(f"the server stored other bytes: {item}")
                uploads.append(result)
                # Keep the disk from filling up over the rounds.
                shutil.rmtree(server_dir / "media", ignore_errors=True)
    shutil.rmtree(server_dir, ignore_errors=True)

    copy_mib_s = mib_s(size, copies)
    sink_mib_s = mib_s(size, [m.seconds for m in sinks])
    upload_mib_s = mib_s(size, [m.seconds for m in uploads])
    ratio = upload_mib_s / copy_mib_s
    peak_growth_mib = max(m.rss_growth_kib for m in uploads) / 1024
    summary = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}",
        "fileBytes": size,
        "video": {
            "codec": info.video_codec,
            "size": f"{info.width}x{info.height}",
            "frames": info.frame_count,
            "durationSeconds": info.duration_seconds,
        },
        "rounds": args.rounds,
        "serverCpus": args.server_cpus or "not pinned",
        "copySeconds": [round(s, 2) for s in copies],
        "sinkSeconds": [round(m.seconds, 2) for m in sinks],
        "uploadSeconds": [round(m.seconds, 2) for m in uploads],
        "copyMiBps": round(copy_mib_s, 1),
        "sinkMiBps": round(sink_mib_s, 1),
        "uploadMiBps": round(upload_mib_s, 1),
        "ratioToCopy": round(ratio, 3),
        "ratioToSink": round(upload_mib_s / sink_mib_s, 3),
        "serverCpuSeconds": {
            "sink": [round(m.server_cpu_seconds, 2) for m in sinks],
            "upload": [round(m.server_cpu_seconds, 2) for m in uploads],
        },
        "serverRssGrowthMiB": {
            "sink": [round(m.rss_growth_kib / 1024, 1) for m in sinks],
            "upload": [round(m.rss_growth_kib / 1024, 1) for m in uploads],
        },
        "inspectionAloneSeconds": round(inspect_seconds, 2),
        "targets": {
            "ratio to copy >= 0.40": ratio >= 0.40,
            "rss growth < 150 MiB": peak_growth_mib < 150,
        },
    }
    (RESULTS / "media.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    print(
        f"\nplain copy + fsync: {copy_mib_s:.0f} MiB/s\n"
        f"bare uvicorn/Starlette body sink: {sink_mib_s:.0f} MiB/s\n"
        f"upload through Pressroom: {upload_mib_s:.0f} MiB/s "
        f"({ratio:.0%} of the copy, {upload_mib_s / sink_mib_s:.0%} of the sink)\n"
        f"server peak RSS growth: {peak_growth_mib:.1f} MiB"
    )


if __name__ == "__main__":
    main()
