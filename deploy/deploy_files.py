"""Readers for the deploy/ files and facts about the binaries, for deploy_manifests_test.

Paths are resolved in the test's runfiles ($TEST_SRCDIR/$TEST_WORKSPACE), or in the
source tree when run by hand. Dockerfile, systemd unit and Makefile are parsed just far
enough for the checks (continuations, comments, repeated keys); dpkg answers which
Debian package owns a linked library.
"""
import glob
import json
import os
import re
import subprocess
import tempfile
import time

import yaml


def workspace_root():
    if "TEST_SRCDIR" in os.environ:
        return os.path.join(os.environ["TEST_SRCDIR"],
                            os.environ.get("TEST_WORKSPACE", "dictlog"))
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


ROOT = workspace_root()
DICTLOGD = os.path.join(ROOT, "server/daemon/dictlogd")
DICTLOG = os.path.join(ROOT, "client/cli/dictlog")


def read(relative_path):
    with open(os.path.join(ROOT, relative_path)) as f:
        return f.read()


def flag_values(argv):
    """--name=value flags of a command line; a later flag wins, as in absl."""
    flags = {}
    for arg in argv:
        match = re.fullmatch(r"--([A-Za-z0-9_]+)=(.*)", arg)
        if match:
            flags[match.group(1)] = match.group(2)
    return flags


def default_drain_grace():
    """--shutdown_grace_seconds' default, as `dictlogd --help` prints it."""
    out = subprocess.run([DICTLOGD, "--help"], capture_output=True, text=True).stdout
    match = re.search(r"--shutdown_grace_seconds \(.*?\);\s+default: (\d+);", out, re.S)
    if not match:
        raise AssertionError("dictlogd --help lists no --shutdown_grace_seconds default")
    return int(match.group(1))


def drain_grace(flags):
    """dictlogd's drain grace in seconds with these flags."""
    if "shutdown_grace_seconds" in flags:
        return int(flags["shutdown_grace_seconds"])
    return default_drain_grace()


def help_default(flag):
    """A dictlogd flag's default, as `dictlogd --help` prints it."""
    out = subprocess.run([DICTLOGD, "--help"], capture_output=True, text=True).stdout
    match = re.search(r"--%s \(.*?\);\s+default: (\S+?);" % flag, out, re.S)
    if not match:
        raise AssertionError(f"dictlogd --help lists no --{flag} default")
    return match.group(1).strip('"')


def flag_or_default(flags, name):
    return flags[name] if name in flags else help_default(name)


def memory_quantity(text):
    """Bytes of a Kubernetes memory quantity (512Mi, 2Gi, 1G, 1073741824)."""
    units = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
             "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    match = re.fullmatch(r"(\d+)([A-Za-z]*)", str(text))
    if not match or match.group(2) not in units:
        raise AssertionError(f"memory quantity {text!r}")
    return int(match.group(1)) * units[match.group(2)]


def listen_host_port(flags):
    host, _, port = flags["listen"].rpartition(":")
    return host.strip("[]"), int(port)


# --- Makefile and Dockerfile ---------------------------------------------------------

def makefile_text():
    """The Makefile: from runfiles once the root package exports it, else beside the
    source tree the runfiles link to (deploy/BUILD.bazel tags the test external, so a
    changed Makefile is not hidden by a cached result)."""
    if os.path.exists(os.path.join(ROOT, "Makefile")):
        return read("Makefile")
    source_root = os.path.dirname(os.path.dirname(
        os.path.realpath(os.path.join(ROOT, "deploy/Dockerfile"))))
    with open(os.path.join(source_root, "Makefile")) as f:
        return f.read()


def makefile_packages():
    text = makefile_text().replace("\\\n", " ")
    match = re.search(r"^DEBIAN_PACKAGES\s*:?=(.*)$", text, re.M)
    if not match:
        raise AssertionError("Makefile has no DEBIAN_PACKAGES")
    return set(match.group(1).split())


def dockerfile_stages(text):
    """[(FROM line, [(INSTRUCTION, arguments), ...]), ...], comments and continuations
    resolved."""
    lines = [l for l in text.splitlines() if not l.lstrip().startswith("#")]
    joined = "\n".join(lines).replace("\\\n", " ")
    stages = []
    for line in joined.splitlines():
        if not line.strip():
            continue
        instruction, _, arguments = line.strip().partition(" ")
        instruction = instruction.upper()
        if instruction == "FROM":
            stages.append((arguments.strip(), []))
        elif stages:
            stages[-1][1].append((instruction, arguments.strip()))
    return stages


def apt_packages(run_arguments):
    packages = set()
    for command in re.split(r"&&|;|\|\|", run_arguments):
        words = command.split()
        if "apt-get" in words and "install" in words:
            tail = words[words.index("install") + 1:]
            packages |= {w for w in tail if not w.startswith("-")}
    return packages


def stage_packages(stage):
    packages = set()
    for instruction, arguments in stage[1]:
        if instruction == "RUN":
            packages |= apt_packages(arguments)
    return packages


def instructions(stage, name):
    return [arguments for instruction, arguments in stage[1] if instruction == name]


def image_argv(stage):
    """The command the image runs without arguments: ENTRYPOINT + CMD (exec form)."""
    entrypoint = instructions(stage, "ENTRYPOINT")
    cmd = instructions(stage, "CMD")
    return ((json.loads(entrypoint[-1]) if entrypoint else []),
            (json.loads(cmd[-1]) if cmd else []))


# --- Debian packages of the libraries the binaries link ------------------------------

def linked_library_paths(binary):
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True)
    paths = set()
    for line in out.stdout.splitlines():
        match = re.search(r"=>\s+(/\S+)", line)
        if match:
            paths.add(match.group(1))
        elif "=> not found" in line:
            raise AssertionError(f"{binary}: {line.strip()}")
    return paths


def owning_packages(paths):
    """{path: Debian package or None}, with one dpkg call (it is slow to start)."""
    spellings = {}
    for path in paths:
        real = os.path.realpath(path)
        for p in (path, real):  # merged /usr: dpkg may know either spelling
            spellings.setdefault(path, []).extend(
                [p, p[4:] if p.startswith("/usr/") else "/usr" + p])
    out = subprocess.run(["dpkg", "-S"] + sorted({s for v in spellings.values() for s in v}),
                         capture_output=True, text=True).stdout
    owners = {}
    for line in out.splitlines():
        package, _, owned = line.partition(": ")
        owners[owned.strip()] = package.split(",")[0].split(":")[0].strip()
    return {path: next((owners[s] for s in spelled if s in owners), None)
            for path, spelled in spellings.items()}


def installed_packages():
    """{package: (priority, [dependency names])} of the installed packages."""
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package}\t${Priority}\t${Pre-Depends}, ${Depends}\n"],
        capture_output=True, text=True, check=True).stdout
    packages = {}
    for line in out.splitlines():
        name, priority, depends = line.split("\t")
        names = [re.split(r"[\s(:]", alt.strip())[0]
                 for dep in depends.split(",") for alt in dep.split("|")]
        packages[name] = (priority, [n for n in names if n])
    return packages


def dependency_closure(roots, packages):
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(packages.get(name, ("", []))[1])
    return seen


def parse_unit(text):
    """{section: {key: [values]}}; rejects lines that are neither."""
    sections, current = {}, None
    text = re.sub(r"\\\n", " ", text)
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if re.fullmatch(r"\[[A-Za-z]+\]", line):
            current = sections.setdefault(line[1:-1], {})
            continue
        match = re.fullmatch(r"([A-Za-z][A-Za-z0-9]*)\s*=\s*(.*)", line)
        if current is None or not match:
            raise AssertionError(f"unit line {number} does not parse: {raw!r}")
        current.setdefault(match.group(1), []).append(match.group(2))
    return sections


def systemd_seconds(value):
    if value == "infinity":
        return float("inf")
    units = {"": 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "ms": 0.001}
    total = 0.0
    for number, unit in re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]*)", value):
        if unit not in units:
            raise AssertionError(f"time span {value!r}")
        total += float(number) * units[unit]
    return total


def load_k8s_documents(pattern="deploy/k8s/*.yaml"):
    documents = []
    paths = sorted(glob.glob(os.path.join(ROOT, pattern)))
    if not paths:
        raise AssertionError(f"no {pattern} in the test's data")
    for path in paths:
        with open(path) as f:
            documents += [d for d in yaml.safe_load_all(f) if d is not None]
    return documents


def labels_match(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def config_routes(name, contents):
    """(a category the rule matches, pool) for each routing rule of a config file."""
    if name.endswith(".json"):
        rules = json.loads(contents).get("routes", [])
    else:
        rules = [dict(re.findall(r'(\w+):\s*"([^"]*)"', body))
                 for body in re.findall(r"routes\s*\{([^}]*)\}", contents)]
    return [(r.get("category") or r["prefix"] + "probe", r["pool"]) for r in rules]


def config_pools(name, contents):
    """Names of the pools a config file declares."""
    if name.endswith(".json"):
        return {pool["name"] for pool in json.loads(contents).get("pools", [])}
    return set(re.findall(r'pools\s*\{\s*name:\s*"([^"]+)"', contents))


# --- TLS material and running dictlogd with a deployment file's flags ---------------

def make_pki(directory, server_names):
    """A CA and a server certificate for `server_names` (DNS) and 127.0.0.1, made with
    openssl. Returns {"ca.crt": PEM, "tls.crt": PEM, "tls.key": PEM}."""
    key_opts = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-days", "1"]
    run = lambda *args: subprocess.run(["openssl", *args], cwd=directory, check=True,
                                       capture_output=True)
    run("req", "-x509", *key_opts, "-keyout", "ca.key", "-out", "ca.crt",
        "-subj", "/CN=deploy-test-ca")
    run("req", *key_opts, "-keyout", "tls.key", "-out", "tls.csr", "-subj", "/CN=dictlogd")
    sans = ",".join([f"DNS:{n}" for n in server_names] + ["IP:127.0.0.1"])
    with open(os.path.join(directory, "tls.ext"), "w") as f:
        f.write(f"subjectAltName={sans}\nextendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-days", "1", "-in", "tls.csr", "-CA", "ca.crt", "-CAkey",
        "ca.key", "-set_serial", "7", "-extfile", "tls.ext", "-out", "tls.crt")
    return {name: open(os.path.join(directory, name)).read()
            for name in ("ca.crt", "tls.crt", "tls.key")}


def rewrite_paths(value, root):
    """An absolute path (or a flag's value holding one) moved under `root`."""
    return re.sub(r"(^|=)(/[^\s,]*)", lambda m: m.group(1) + root + m.group(2), value)


class _DictlogdProcess:
    """What Served and Dictlogd share: a dictlogd whose output goes to dictlogd.log in
    the temp dir self._work; started by _start, stopped by stop or on exit."""

    def _start(self, argv, port_file):
        """Runs argv and waits up to 60 s until dictlogd serves (it renames `port_file`
        into place; address set, True) or exits (False)."""
        self._log = open(os.path.join(self._work.name, "dictlogd.log"), "w+")
        self._process = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self._process.poll() is None:
            if os.path.exists(port_file):
                with open(port_file) as f:
                    self.address = f"127.0.0.1:{f.read().strip()}"
                return True
            time.sleep(0.1)
        return False

    def stop(self, timeout):
        """SIGTERM, then the exit status."""
        if self._process.poll() is None:
            self._process.terminate()
        return self._process.wait(timeout=timeout)

    def log(self):
        self._log.seek(0)
        return self._log.read()

    def __exit__(self, *unused):
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._log.close()
        self._work.cleanup()


class Served(_DictlogdProcess):
    """The Bazel-built dictlogd run with a deployment file's flags: every absolute path
    is moved under a temp dir (`files` maps those paths to contents to write first),
    --listen and --metrics_listen become 127.0.0.1 port 0. A context manager like
    Dictlogd; `address` and `metrics_port` are set once it serves."""

    def __init__(self, flags, files):
        self._work = tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR"))
        self.root = self._work.name
        self._flags, self._files = dict(flags), files
        self.address = self.metrics_port = None

    def path(self, absolute):
        return self.root + absolute

    def __enter__(self):
        for path, contents in self._files.items():
            os.makedirs(os.path.dirname(self.path(path)), exist_ok=True)
            with open(self.path(path), "w") as f:
                f.write(contents)
        flags = {k: rewrite_paths(v, self.root) for k, v in self._flags.items()}
        for key in ("data_dir", "backup_root"):
            if key in flags:
                os.makedirs(flags[key], exist_ok=True)
        port_file = os.path.join(self.root, "port")
        flags["listen"], flags["port_file"] = "127.0.0.1:0", port_file
        if "metrics_listen" in flags:
            flags["metrics_listen"] = "127.0.0.1:0"
            flags["metrics_port_file"] = os.path.join(self.root, "metrics_port")
        argv = [DICTLOGD] + [f"--{k}={v}" for k, v in flags.items()]
        if self._start(argv, port_file) and "metrics_port_file" in flags:
            with open(flags["metrics_port_file"]) as f:
                self.metrics_port = int(f.read())
        return self

    def run(self, argv):
        """A command (a probe, the CLI) with its absolute paths moved under the temp
        dir and its --server pointed at this dictlogd."""
        moved = [argv[0]] + [rewrite_paths(a, self.root) for a in argv[1:]]
        moved = [f"--server={self.address}" if a.startswith("--server=") else a
                 for a in moved]
        if os.path.basename(moved[0]) == "dictlog":
            moved[0] = DICTLOG
        return subprocess.run(moved, capture_output=True, text=True)

    def scrape(self, token):
        """(status line, body) of GET /metrics, with `token` if not None."""
        import socket
        with socket.create_connection(("127.0.0.1", self.metrics_port), timeout=10) as s:
            header = f"Authorization: Bearer {token}\r\n" if token is not None else ""
            s.sendall(f"GET /metrics HTTP/1.1\r\nHost: x\r\n{header}\r\n".encode())
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        head, _, body = data.decode().partition("\r\n\r\n")
        return head.split("\r\n")[0], body


class Dictlogd(_DictlogdProcess):
    """The Bazel-built dictlogd with a config file (written as `name`), on 127.0.0.1
    port 0 with its data in a temp dir under $TEST_TMPDIR. A context manager: on entry it
    waits until dictlogd serves (address set) or exits (address None); on exit it kills
    a dictlogd still running and removes the directory."""

    def __init__(self, name, contents):
        self._work = tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR"))
        self._name, self._contents = name, contents
        self.address = None

    def __enter__(self):
        work = self._work.name
        config, port_file = os.path.join(work, self._name), os.path.join(work, "port")
        with open(config, "w") as f:
            f.write(self._contents)
        self._start([DICTLOGD, "--listen=127.0.0.1:0", f"--port_file={port_file}",
                     f"--data_dir={work}/data", f"--config={config}"], port_file)
        return self

    def cli(self, *args, input=None):
        """stdout of `dictlog --server=<this one> args...`; raises if it fails."""
        return subprocess.run([DICTLOG, f"--server={self.address}", *args], input=input,
                              capture_output=True, text=True, check=True).stdout


# --- A Kafka broker run by the image's entry point ---------------------------------

KAFKA_LIB = os.path.join(ROOT, "deploy/local-cluster/kafka/lib")
KAFKA_SH = os.path.join(ROOT, "deploy/kafka/kafka.sh")


def free_ports(count):
    """`count` free loopback ports (the kernel's choice; released before use)."""
    import socket
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def parse_properties(text):
    """{key: value} of a Java properties text (key=value lines; a later key wins)."""
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if line and line[0] not in "#!":
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


class KafkaBroker:
    """One KRaft broker+controller on 127.0.0.1, run as the Kafka pods run it:
    deploy/kafka/kafka.sh `format` (twice: a formatted volume is left as it is), then
    `serve`, with a ConfigMap's files in a temp config dir. The shared
    server.properties is followed by `overrides` (loopback listeners, a single voter,
    ...: later lines win). A context manager: on entry it waits up to 90 s until the
    broker has started (address set) or exits; on exit it stops the broker by its pid
    (TERM, then KILL) and removes the directory."""

    def __init__(self, files, overrides):
        self._work = tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR"))
        self._files, self._overrides = files, overrides
        self.address, self.formats = None, []
        self._process = None

    def _env(self):
        root = self._work.name
        return {**os.environ, "POD_NAME": "kafka-0", "POD_NAMESPACE": "test",
                "KAFKA_CONFIG": root + "/config", "KAFKA_STATE": root + "/state",
                "KAFKA_LIB": KAFKA_LIB,
                "KAFKA_HEAP_OPTS": "-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1"}

    def __enter__(self):
        root = self._work.name
        port, controller = free_ports(2)
        overrides = dict(self._overrides)
        overrides.update({
            "controller.quorum.voters": f"0@127.0.0.1:{controller}",
            "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "log.dirs": root + "/state/data"})
        self.overridden = set(overrides)
        os.makedirs(root + "/config")
        os.makedirs(root + "/state")
        for name, contents in self._files.items():
            if name == "server.properties":
                contents += "\n" + "".join(f"{k}={v}\n" for k, v in overrides.items())
            with open(os.path.join(root, "config", name), "w") as f:
                f.write(contents)
        for _ in range(2):
            self.formats.append(subprocess.run(["/bin/sh", KAFKA_SH, "format"],
                                               env=self._env(), capture_output=True,
                                               text=True, timeout=120))
            if self.formats[-1].returncode != 0:
                return self
        self._log = open(os.path.join(root, "server.log"), "w+")
        self._process = subprocess.Popen(["/bin/sh", KAFKA_SH, "serve"], env=self._env(),
                                         stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and self._process.poll() is None:
            if "Kafka Server started" in self.log():
                self.address = f"127.0.0.1:{port}"
                break
            time.sleep(0.2)
        return self

    def log(self):
        if self._process is None:
            return "\n".join(f.stdout + f.stderr for f in self.formats)
        self._log.seek(0)
        return self._log.read()

    def config_values(self):
        """{key: value} of the broker's "KafkaConfig values:" dump at start: every key
        a 4.4 broker defines, with the value it took ([a, b] lists as a,b)."""
        match = re.search(r"KafkaConfig values: *\n((?:\t.*\n)+)", self.log())
        if not match:
            raise AssertionError("the broker logged no KafkaConfig values")
        values = {}
        for line in match.group(1).splitlines():
            key, _, value = line.strip().partition(" =")
            values[key] = re.sub(r"^\[(.*)\]$", r"\1", value.strip()).replace(", ", ",")
        return values

    def __exit__(self, *unused):
        if self._process is not None:
            if self._process.poll() is None:
                self._process.terminate()
                try:
                    self._process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait()
            self._log.close()
        self._work.cleanup()
