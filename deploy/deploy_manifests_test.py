#!/usr/bin/env python3
"""Checks the deploy/ files against each other and against the real binaries.

Kubernetes manifests (every YAML under deploy/k8s), the systemd unit (and its insecure
drop-in) and the Dockerfile are parsed and their fields that matter are compared with what dictlogd does: its drain
grace (read from `dictlogd --help`, or a --shutdown_grace_seconds in the manifests),
its data directory and port (the flags each file passes), the shared libraries it links
(ldd, mapped to Debian packages with dpkg), and the build packages in the Makefile. The
ConfigMap's config file is given to the Bazel-built dictlogd, which must serve with it
(on 127.0.0.1 port 0, data under $TEST_TMPDIR), create the pools it declares, route
a record of each rule's category to the rule's pool and exit 0 on SIGTERM.
Each file is secure by default (TLS, a tokens file, --sync_writes, --backup_root): the
StatefulSet's and the unit's flags are run by the real dictlogd with test certificates
and tokens in place of the mounted Secrets / credentials, and the StatefulSet's exec
probes (`dictlog health` with TLS) must pass against it, plaintext calls and
token-less scrapes must fail. The memory limit must cover the caches and gRPC quota.
The cluster manifests (deploy/k8s/cluster) are checked the same way and against a real
Kafka 4.4 broker: one KRaft node started by the Kafka image's entry point
(deploy/kafka/kafka.sh) from the ConfigMap's properties with loopback listeners, which
must apply every property (its "KafkaConfig values" dump); then the dictlogd
StatefulSet's flags are run by the real dictlogd against it (--kafka_bootstrap
replaced, --kafka_replication_factor=1 for the single broker). Three brokers would not
start within the test's minute on a loaded 2-core machine: the 3-node quorum is
checked by reading the manifests (voters, DNS names, replicas).
Run: bazel test //deploy:all
"""
import json
import os
import re
import shlex
import subprocess
import tempfile
import time
import unittest

from deploy.deploy_files import (
    DICTLOG, DICTLOGD, KAFKA_LIB, Dictlogd, KafkaBroker, Served, config_pools,
    config_routes, dependency_closure, dockerfile_stages, drain_grace, flag_or_default,
    flag_values, image_argv, installed_packages, instructions, labels_match,
    linked_library_paths, listen_host_port, load_k8s_documents, make_pki,
    makefile_packages, makefile_text, memory_quantity, owning_packages,
    parse_properties, parse_unit, read, stage_packages, systemd_seconds)

# Packages the Makefile installs for tests and benchmarks only; the image build does
# not need them (librdkafka-dev, maven and the JRE: the local Kafka cluster's test and
# kafka_check, until dictlogd itself links librdkafka; matplotlib: benchmark charts).
TEST_ONLY_PACKAGES = {"python3-yaml", "python3-grpcio", "python3-protobuf",
                      "python3-zstandard", "prometheus", "python3-venv",
                      "maven", "openjdk-17-jre-headless",
                      "python3-matplotlib"}
# Memory beyond the configured caches and the gRPC quota: RocksDB's memtables (2 x 64
# MiB for each busy column family) and the process itself.
MEMORY_OVERHEAD = 384 << 20
# librdkafka's consumer pre-fetches at most queued.max.messages.kbytes (64 MiB) per
# partition; the producer copies each call's message while it waits for acks=all (at
# most the gRPC quota's worth of calls).
KAFKA_PREFETCH_PER_PARTITION = 64 << 20
# A JVM's memory beyond its heap: metaspace, thread stacks, direct buffers.
JVM_OVERHEAD = 512 << 20
# Written by Kafka's StorageTool into every volume; 16 bytes, URL-safe base64.
CLUSTER_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{21}")
TEST_TOKEN = "deploy-test-admin-token-0123456789"
METRICS_TOKEN = "deploy-test-metrics-token-0123456789"


def check_secure_by_default(test, flags):
    """TLS, tokens, synced writes and confined backups, no --insecure."""
    for flag in ("tls_cert", "tls_key", "tokens_file", "backup_root"):
        test.assertTrue(flags.get(flag), f"--{flag} is set")
    test.assertNotIn(flags.get("insecure", "false"), ("true", "1"), "no --insecure")
    test.assertEqual(flags.get("sync_writes"), "true", "--sync_writes=true")


UNIT_HARDENING = {
    "NoNewPrivileges": {"yes", "true"},
    "ProtectSystem": {"strict"},
    "ProtectHome": {"yes", "true", "read-only", "tmpfs"},
    "PrivateTmp": {"yes", "true"},
    "PrivateDevices": {"yes", "true"},
}


class DockerfileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stages = dockerfile_stages(read("deploy/Dockerfile"))
        cls.build, cls.runtime = cls.stages[0], cls.stages[-1]
        cls.entrypoint, cls.cmd = image_argv(cls.runtime)
        cls.flags = flag_values(cls.entrypoint[1:] + cls.cmd)

    def test_multi_stage_on_bookworm(self):
        self.assertGreaterEqual(len(self.stages), 2, "build and runtime stages")
        for from_line, _ in self.stages:
            image = from_line.split()[0]
            self.assertRegex(image, r"^debian:bookworm(-slim)?$", from_line)

    def test_build_stage_packages_match_makefile(self):
        expected = makefile_packages() - TEST_ONLY_PACKAGES
        self.assertEqual(stage_packages(self.build), expected,
                         "build stage apt-get install vs Makefile DEBIAN_PACKAGES")

    def test_build_stage_builds_both_binaries(self):
        runs = " ".join(instructions(self.build, "RUN"))
        self.assertRegex(runs, r"bazel build -c opt")
        for target in ("//server/daemon:dictlogd", "//client/cli:dictlog"):
            self.assertIn(target, runs)
        copies = " ".join(instructions(self.runtime, "COPY"))
        self.assertRegex(copies, r"--from=\S+ .*dictlogd")

    def test_runtime_packages_cover_linked_libraries(self):
        installed = installed_packages()
        listed = stage_packages(self.runtime)
        self.assertFalse({p for p in listed if p.endswith("-dev")}, "no -dev at runtime")
        self.assertNotIn("bazel-bootstrap", listed)
        in_image = dependency_closure(listed, installed) | {
            name for name, (priority, _) in installed.items() if priority == "required"}
        libraries = linked_library_paths(DICTLOGD) | linked_library_paths(DICTLOG)
        self.assertTrue(libraries, "ldd found the shared libraries")
        for library, package in sorted(owning_packages(libraries).items()):
            self.assertIsNotNone(package, f"{library} belongs to no Debian package")
            self.assertIn(package, in_image, f"the binaries link {library} from "
                          f"{package}, which the runtime stage does not install")

    def test_runs_as_non_root_user(self):
        users = instructions(self.runtime, "USER")
        self.assertTrue(users, "runtime stage sets USER")
        user = users[-1].split(":")[0]
        self.assertNotIn(user, ("root", "0"))
        if user.isdigit():
            runs = " ".join(instructions(self.runtime, "RUN"))
            match = re.search(r"useradd\b[^&;]*--uid (\d+)", runs)
            self.assertTrue(match and match.group(1) == user,
                            f"USER {user} is the uid useradd creates")

    def test_secure_by_default(self):
        check_secure_by_default(self, self.flags)
        # The opt-in to plaintext replaces CMD, so the flags must not be in ENTRYPOINT.
        self.assertEqual(len(self.entrypoint), 1, "flags go in CMD, not ENTRYPOINT")
        volumes = " ".join(instructions(self.runtime, "VOLUME")).split()
        self.assertIn(self.flags["backup_root"], volumes)

    def test_entrypoint_serves_volume_and_exposed_port(self):
        self.assertEqual(os.path.basename(self.entrypoint[0]), "dictlogd")
        host, port = listen_host_port(self.flags)
        self.assertIn(host, ("0.0.0.0", "::"), "reachable from outside the container")
        exposed = " ".join(instructions(self.runtime, "EXPOSE")).split()
        self.assertIn(str(port), [e.split("/")[0] for e in exposed])
        volumes = " ".join(instructions(self.runtime, "VOLUME")).split()
        self.assertIn(self.flags["data_dir"], volumes)
        stop = instructions(self.runtime, "STOPSIGNAL")
        self.assertIn(stop[-1] if stop else "SIGTERM", ("SIGTERM", "15"))


class SystemdUnitTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.text = read("deploy/systemd/dictlogd.service")
        cls.unit = parse_unit(cls.text)
        cls.service = cls.unit["Service"]
        cls.argv = shlex.split(cls.last("ExecStart"))
        cls.flags = flag_values(cls.argv)

    @classmethod
    def last(cls, key, default=None):
        values = cls.service.get(key)
        return values[-1] if values else default

    def credentials(self):
        """{name: source path} of LoadCredential=."""
        return dict(v.split(":", 1) for v in self.service.get("LoadCredential", []))

    def test_secure_by_default(self):
        check_secure_by_default(self, self.flags)
        credentials = self.credentials()
        for flag in ("tls_cert", "tls_key", "tokens_file"):
            value = self.flags[flag]
            self.assertTrue(value.startswith("%d/"), f"--{flag} is a credential (%d)")
            self.assertTrue(credentials.get(value[3:], "").startswith("/etc/dictlog/"),
                            f"--{flag}: LoadCredential from /etc/dictlog")
        self.assertIn(self.flags["backup_root"], self.writable())

    def test_unit_flags_serve_tls_with_tokens(self):
        # The credentials as systemd would hand them over, the rest of the flags as is.
        with tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR")) as pki:
            material = make_pki(pki, ["localhost"])
        material["tokens"] = f"{TEST_TOKEN} admin\n"
        credentials = self.credentials()
        flags = {k: v.replace("%d/", "/run/credentials/") for k, v in self.flags.items()}
        files = {"/run/credentials/" + name: material[os.path.basename(source)]
                 for name, source in credentials.items()}
        files["/ca.crt"] = material["ca.crt"]
        files["/token"] = TEST_TOKEN
        with Served(flags, files) as server:
            self.assertTrue(server.address, "dictlogd did not serve:\n" + server.log())
            self.assertIn("TLS, bearer tokens", server.log())
            pools = server.run(["dictlog", "--server=x", "--tls_ca=/ca.crt",
                                "--tls_server_name=localhost", "--token_file=/token",
                                "pools"])
            self.assertEqual(pools.returncode, 0, pools.stderr)
            self.assertEqual(server.stop(drain_grace(self.flags) + 30), 0)

    def test_insecure_drop_in_is_explicit(self):
        drop_in = parse_unit(read("deploy/systemd/dictlogd-insecure.conf"))["Service"]
        starts = drop_in.get("ExecStart", [])
        self.assertEqual(starts[0], "", "ExecStart= clears the unit's command first")
        flags = flag_values(shlex.split(starts[-1]))
        self.assertEqual(flags.get("insecure"), "true")
        self.assertFalse({"tls_cert", "tls_key", "tokens_file"} & set(flags))
        self.assertEqual(flags.get("sync_writes"), "true")
        self.assertEqual(flags.get("data_dir"), self.flags["data_dir"])

    def writable(self):
        states = " ".join(self.service.get("StateDirectory", [])).split()
        writable = ["/var/lib/" + state for state in states]
        return writable + " ".join(self.service.get("ReadWritePaths", [])).split()

    def test_sections(self):
        self.assertEqual(set(self.unit), {"Unit", "Service", "Install"})
        self.assertIn("multi-user.target", self.unit["Install"].get("WantedBy", []))

    def test_runs_dictlogd_as_user_with_state_directory(self):
        self.assertEqual(os.path.basename(self.argv[0].lstrip("-@+!:")), "dictlogd")
        self.assertNotIn(self.last("User", "root"), ("root", "0"))
        self.assertIn(self.flags.get("data_dir"), self.writable(),
                      "--data_dir is the StateDirectory or a ReadWritePaths entry")

    def test_type_matches_dictlogd(self):
        # Type=notify needs sd_notify, i.e. libsystemd linked into dictlogd.
        kind = self.last("Type", "simple")
        self.assertIn(kind, ("simple", "exec", "notify"))
        if kind == "notify":
            linked = " ".join(linked_library_paths(DICTLOGD))
            self.assertIn("libsystemd", linked, "Type=notify but no sd_notify")

    def test_restart_and_stop(self):
        self.assertIn(self.last("Restart"), ("on-failure", "on-abnormal", "always"))
        self.assertIn(self.last("KillSignal", "SIGTERM"), ("SIGTERM", "15"))
        stop = systemd_seconds(self.last("TimeoutStopSec", "90"))
        self.assertGreater(stop, drain_grace(self.flags),
                           "TimeoutStopSec must outlast dictlogd's drain")
        self.assertGreaterEqual(int(self.last("LimitNOFILE", "0").split(":")[-1]), 4096)

    def test_hardening(self):
        for key, allowed in UNIT_HARDENING.items():
            self.assertIn(self.last(key), allowed, key)
        families = " ".join(self.service.get("RestrictAddressFamilies", [])).split()
        self.assertEqual(set(families), {"AF_INET", "AF_INET6", "AF_UNIX"})

    def test_systemd_analyze_verify(self):
        analyze = "/usr/bin/systemd-analyze"
        if not os.access(analyze, os.X_OK):
            self.skipTest("systemd-analyze not installed")
        with tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR")) as work:
            unit = os.path.join(work, "dictlogd.service")
            text = self.text.replace(self.argv[0], DICTLOGD, 1)  # verify needs it
            for name, source in self.credentials().items():  # and the credentials
                target = os.path.join(work, name)
                open(target, "w").close()
                text = text.replace(":" + source, ":" + target)
            with open(unit, "w") as f:
                f.write(text)
            out = subprocess.run([analyze, "verify", unit], capture_output=True,
                                 text=True)
            complaints = [l for l in (out.stdout + out.stderr).splitlines()
                          if "dictlogd.service" in l]
            self.assertEqual(complaints, [])


class KubernetesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.documents = load_k8s_documents()
        cls.by_kind = {}
        for document in cls.documents:
            cls.by_kind.setdefault(document.get("kind"), []).append(document)
        cls.statefulset = cls.by_kind["StatefulSet"][0]
        cls.pod = cls.statefulset["spec"]["template"]
        cls.container = next(c for c in cls.pod["spec"]["containers"]
                             if c["name"] == "dictlogd")
        # The image's ENTRYPOINT and CMD run unless the container replaces them
        # (command replaces both, args replaces CMD).
        stages = dockerfile_stages(read("deploy/Dockerfile"))
        entrypoint, cmd = image_argv(stages[-1])
        argv = cls.container.get("command", entrypoint) + cls.container.get("args", cmd)
        cls.flags = flag_values(argv)
        cls.env = {e["name"]: e for e in cls.container.get("env", [])}

    def expanded(self, value):
        """A flag value with $(VAR) of the container's env; POD_IP -> 127.0.0.1."""
        def variable(match):
            name = match.group(1)
            self.assertIn(name, self.env, f"$({name}) is in the container's env")
            source = self.env[name]
            if source.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == \
                    "status.podIP":
                return "127.0.0.1"
            return source["value"]
        return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", variable, value)

    def mounted_volume(self, path):
        """The pod volume `path` lies in (through the container's mounts)."""
        mount = next((m for m in self.container["volumeMounts"]
                      if path.startswith(m["mountPath"].rstrip("/") + "/")), None)
        self.assertIsNotNone(mount, f"{path} is in a mounted volume")
        for volume in self.pod["spec"].get("volumes", []):
            if volume["name"] == mount["name"]:
                return mount, volume
        claims = {t["metadata"]["name"]: t
                  for t in self.statefulset["spec"].get("volumeClaimTemplates", [])}
        self.assertIn(mount["name"], claims, f"{path}: a volume or claim template")
        return mount, {"name": mount["name"], "claim": claims[mount["name"]]}

    def secret_key(self, path):
        """(Secret name, key) that the file at `path` comes from."""
        mount, volume = self.mounted_volume(path)
        self.assertIn("secret", volume, f"{path} comes from a Secret")
        key = os.path.relpath(path, mount["mountPath"])
        for item in volume["secret"].get("items", []):
            if item["path"] == key:
                key = item["key"]
        return volume["secret"]["secretName"], key

    def probes(self):
        return [(name, self.container[name]) for name in
                ("startupProbe", "readinessProbe", "livenessProbe") if name in self.container]

    def test_secure_by_default(self):
        check_secure_by_default(self, self.flags)
        for flag in ("tls_cert", "tls_key", "tokens_file", "metrics_token_file"):
            self.assertTrue(self.flags.get(flag), f"--{flag}")
            self.secret_key(self.flags[flag])
        _, volume = self.mounted_volume(self.flags["backup_root"] + "/x")
        self.assertIn("claim", volume, "--backup_root is on a volumeClaimTemplate")

    def test_memory_limit_fits_caches_and_grpc_quota(self):
        limit = memory_quantity(self.container["resources"]["limits"]["memory"])
        needed = (int(flag_or_default(self.flags, "grpc_memory_bytes")) +
                  (int(flag_or_default(self.flags, "block_cache_mb")) << 20) +
                  int(flag_or_default(self.flags, "dictionary_cache_bytes")) +
                  MEMORY_OVERHEAD)
        self.assertGreaterEqual(limit, needed, "limits.memory < gRPC quota + block "
                                "cache + dictionary cache + memtables and process")
        request = self.container["resources"].get("requests", {}).get("memory")
        if request:
            self.assertLessEqual(memory_quantity(request), limit)

    def test_metrics_on_the_pod_ip_with_a_token(self):
        listen = self.flags.get("metrics_listen", "")
        self.assertTrue(listen.startswith("$("), "--metrics_listen is $(POD_IP):PORT")
        self.assertEqual(self.expanded(listen).rpartition(":")[0], "127.0.0.1",
                         "the variable is the pod IP (fieldRef status.podIP)")
        port = int(listen.rpartition(":")[2])
        ports = {p["containerPort"] for p in self.container["ports"]}
        self.assertIn(port, ports)
        annotations = self.pod["metadata"].get("annotations", {})
        if "prometheus.io/port" in annotations:
            self.assertEqual(int(annotations["prometheus.io/port"]), port)

    def test_documents_and_kinds(self):
        for document in self.documents:
            for field in ("apiVersion", "kind", "metadata"):
                self.assertIn(field, document)
            self.assertTrue(document["metadata"].get("name"))
        self.assertLessEqual({"StatefulSet", "Service", "ConfigMap"}, set(self.by_kind))

    def test_single_replica_selected_by_its_labels(self):
        spec = self.statefulset["spec"]
        self.assertLessEqual(spec.get("replicas", 1), 1, "dictlogd has no replication")
        labels = self.pod["metadata"]["labels"]
        self.assertTrue(labels_match(spec["selector"]["matchLabels"], labels))

    def test_data_dir_on_claim_template(self):
        claims = {t["metadata"]["name"]
                  for t in self.statefulset["spec"].get("volumeClaimTemplates", [])}
        mounts = {m["mountPath"]: m["name"] for m in self.container["volumeMounts"]}
        data_dir = self.flags["data_dir"].rstrip("/")
        self.assertIn(data_dir, mounts, "--data_dir is a mount path")
        self.assertIn(mounts[data_dir], claims, "--data_dir is on a volumeClaimTemplate")

    def container_port(self):
        host, port = listen_host_port(self.flags)
        self.assertNotIn(host, ("127.0.0.1", "localhost", "::1"), "kubelet must reach it")
        ports = {p["containerPort"]: p for p in self.container["ports"]}
        self.assertIn(port, ports, "--listen port is a containerPort")
        return ports[port]

    def test_probes_run_dictlog_health_with_the_servers_tls(self):
        # Kubernetes' grpc: probes speak plaintext only: with TLS on they must be exec
        # probes running `dictlog health` against the gRPC port over TLS.
        port = self.container_port()["containerPort"]
        probes = self.probes()
        self.assertTrue(probes)
        for name, spec in probes:
            self.assertEqual(set(spec) & {"grpc", "httpGet", "tcpSocket", "exec"},
                             {"exec"}, name)
            argv = spec["exec"]["command"]
            self.assertEqual(os.path.basename(argv[0]), "dictlog", name)
            self.assertEqual(argv[-1], "health", name)
            flags = flag_values(argv)
            self.assertEqual(flags.get("server"), f"127.0.0.1:{port}", name)
            self.assertTrue(flags.get("tls_ca"), f"{name}: --tls_ca (TLS is on)")
            self.secret_key(flags["tls_ca"])
            if self.flags.get("tls_client_ca"):
                self.assertTrue(flags.get("tls_cert") and flags.get("tls_key"), name)
            timeout = float(flags.get("timeout_seconds", 30))
            self.assertLess(timeout, spec.get("timeoutSeconds", 1), name)

    def test_tls_manifest_serves_and_its_probes_pass(self):
        # The real dictlogd with the manifest's flags; the mounted Secrets replaced by
        # test certificates (for the probes' --tls_server_name) and tokens.
        names = {flag_values(spec["exec"]["command"]).get("tls_server_name", "localhost")
                 for _, spec in self.probes()}
        with tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR")) as pki:
            material = make_pki(pki, sorted(names))
        secrets = {"tokens": f"{TEST_TOKEN} admin\n", "metrics": METRICS_TOKEN, **material}
        files = {}
        for _, spec in self.probes():
            files[flag_values(spec["exec"]["command"])["tls_ca"]] = material["ca.crt"]
        for flag in ("tls_cert", "tls_key", "tokens_file", "metrics_token_file"):
            _, key = self.secret_key(self.flags[flag])
            self.assertIn(key, secrets, f"a test value for Secret key {key}")
            files[self.flags[flag]] = secrets[key]
        name, contents = self.config_file()
        files[self.flags["config"]] = contents
        flags = {k: self.expanded(v) for k, v in self.flags.items()}
        with Served(flags, files) as server:
            self.assertTrue(server.address, "dictlogd did not serve:\n" + server.log())
            self.assertIn("TLS, bearer tokens", server.log())
            for probe, spec in self.probes():
                result = server.run(spec["exec"]["command"])
                self.assertEqual(result.returncode, 0, f"{probe}: {result.stderr}")
                self.assertEqual(result.stdout, "SERVING\n", probe)
            plaintext = server.run(["dictlog", "--server=x", "--timeout_seconds=5",
                                    "pools"])
            self.assertNotEqual(plaintext.returncode, 0, "a plaintext call succeeded")
            ca = flag_values(self.probes()[0][1]["exec"]["command"])["tls_ca"]
            tls = ["dictlog", "--server=x", f"--tls_ca={ca}",
                   f"--tls_server_name={sorted(names)[0]}"]
            no_token = server.run(tls + ["pools"])
            self.assertIn("UNAUTHENTICATED", no_token.stderr)
            with open(server.path("/token"), "w") as f:
                f.write(TEST_TOKEN)
            pools = server.run(tls + ["--token_file=/token", "pools"])
            self.assertEqual(pools.returncode, 0, pools.stderr)
            self.assertEqual(server.scrape(None)[0], "HTTP/1.1 401 Unauthorized")
            status, body = server.scrape(METRICS_TOKEN)
            self.assertEqual(status, "HTTP/1.1 200 OK")
            self.assertIn("dictlog_store_open 1", body)
            self.assertEqual(server.stop(drain_grace(self.flags) + 30), 0)
            after = server.run(self.probes()[0][1]["exec"]["command"])
            self.assertNotEqual(after.returncode, 0, "probe passes on a stopped server")

    def test_termination_grace_outlasts_drain(self):
        seconds = self.pod["spec"].get("terminationGracePeriodSeconds", 30)
        self.assertGreater(seconds, drain_grace(self.flags))

    def test_non_root(self):
        pod_context = self.pod["spec"].get("securityContext", {})
        context = {**pod_context, **self.container.get("securityContext", {})}
        self.assertIs(context.get("runAsNonRoot"), True)
        self.assertNotEqual(context.get("runAsUser"), 0)
        stages = dockerfile_stages(read("deploy/Dockerfile"))
        image_user = instructions(stages[-1], "USER")[-1].split(":")[0]
        if "runAsUser" in context and image_user.isdigit():
            self.assertEqual(context["runAsUser"], int(image_user), "same uid as image")

    def test_services_select_pods_and_target_the_port(self):
        port = self.container_port()
        labels = self.pod["metadata"]["labels"]
        services = {s["metadata"]["name"]: s for s in self.by_kind["Service"]}
        governing = services.get(self.statefulset["spec"]["serviceName"])
        self.assertIsNotNone(governing, "serviceName names a Service")
        self.assertEqual(governing["spec"].get("clusterIP"), "None", "headless")
        for name, service in services.items():
            self.assertTrue(labels_match(service["spec"]["selector"], labels), name)
            for service_port in service["spec"]["ports"]:
                target = service_port.get("targetPort", service_port["port"])
                self.assertIn(target, (port.get("name"), port["containerPort"]), name)

    def config_file(self):
        """(file name, contents) of the --config file, from the mounted ConfigMap."""
        path = self.flags.get("config")
        self.assertTrue(path, "dictlogd gets --config")
        mount = next(m for m in self.container["volumeMounts"]
                     if path.startswith(m["mountPath"].rstrip("/") + "/"))
        volume = next(v for v in self.pod["spec"]["volumes"] if v["name"] == mount["name"])
        source = volume["configMap"]
        key = os.path.relpath(path, mount["mountPath"])
        for item in source.get("items", []):
            if item["path"] == key:
                key = item["key"]
        config_map = next(c for c in self.by_kind["ConfigMap"]
                          if c["metadata"]["name"] == source["name"])
        self.assertIn(key, config_map["data"])
        return os.path.basename(path), config_map["data"][key]

    def test_config_map_config_is_served_by_dictlogd(self):
        name, contents = self.config_file()
        with Dictlogd(name, contents) as server:
            self.assertTrue(server.address, "dictlogd did not serve:\n" + server.log())
            pools = server.cli("pools", "--format=json")
            served = {json.loads(line)["pool"] for line in pools.splitlines() if line}
            self.assertLessEqual(config_pools(name, contents), served,
                                 "the config's pools are created")
            for category, pool in config_routes(name, contents):
                ids = server.cli("append", f"--category={category}", "-", input="probe\n")
                self.assertTrue(ids.startswith(pool + "/"),
                                f"{category} went to {ids.strip()}, not to {pool}")
            self.assertEqual(server.stop(drain_grace(self.flags) + 30), 0,
                             "exit status after SIGTERM")

    def test_dictlogd_rejects_a_broken_config(self):
        # The check above means something only if dictlogd refuses bad config files.
        name, contents = self.config_file()
        broken = contents + ("]" if name.endswith(".json") else "\n}")
        with Dictlogd(name, broken) as server:
            self.assertIsNone(server.address, "served with a broken config")
            self.assertNotEqual(server.stop(5), 0)


class KubernetesClusterTest(unittest.TestCase):
    """deploy/k8s/cluster: Kafka and dictlogd StatefulSets for cluster mode."""

    @classmethod
    def setUpClass(cls):
        cls.documents = load_k8s_documents("deploy/k8s/cluster/*.yaml")
        cls.named = {(d["kind"], d["metadata"]["name"]): d for d in cls.documents}
        cls.kafka = cls.named[("StatefulSet", "kafka")]
        cls.dictlogd = cls.named[("StatefulSet", "dictlogd")]
        cls.container = cls.dictlogd["spec"]["template"]["spec"]["containers"][0]
        stages = dockerfile_stages(read("deploy/Dockerfile"))
        entrypoint, cmd = image_argv(stages[-1])
        cls.flags = flag_values(cls.container.get("command", entrypoint) +
                                cls.container.get("args", cmd))
        config = cls.named[("ConfigMap", "kafka-config")]["data"]
        cls.kafka_files = config
        cls.properties = parse_properties(config["server.properties"])

    def pod_dns_names(self, statefulset):
        spec = statefulset["spec"]
        return [f"{statefulset['metadata']['name']}-{i}.{spec['serviceName']}"
                for i in range(spec["replicas"])]

    def env(self, container):
        return {e["name"]: e for e in container.get("env", [])}

    def expanded(self, value, pod="dictlogd-0"):
        """$(VAR) of the dictlogd container's env: the pod's name, namespace or IP."""
        fields = {"metadata.name": pod, "metadata.namespace": "test",
                  "status.podIP": "127.0.0.1"}
        env = self.env(self.container)

        def variable(match):
            source = env[match.group(1)]
            path = source.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
            return fields[path] if path else source["value"]
        return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", variable, value)

    def test_cluster_nodes_are_the_statefulsets_pods(self):
        spec = self.dictlogd["spec"]
        self.assertGreaterEqual(spec["replicas"], 3)
        name = self.dictlogd["metadata"]["name"]
        nodes = self.flags["cluster_nodes"].split(",")
        self.assertEqual(nodes, [f"{name}-{i}" for i in range(spec["replicas"])],
                         "--cluster_nodes lists every pod in ordinal order")
        self.assertEqual(self.flags["node_name"], "$(POD_NAME)")
        self.assertEqual(self.env(self.container)["POD_NAME"]["valueFrom"]["fieldRef"]
                         ["fieldPath"], "metadata.name")
        for i in range(spec["replicas"]):
            self.assertIn(self.expanded("$(POD_NAME)", f"{name}-{i}"), nodes)

    def test_bootstrap_is_every_kafka_pod(self):
        ports = {p["name"]: p["containerPort"]
                 for p in self.kafka["spec"]["template"]["spec"]["containers"][0]["ports"]}
        expected = [f"{name}:{ports['broker']}" for name in self.pod_dns_names(self.kafka)]
        self.assertEqual(self.flags["kafka_bootstrap"].split(","), expected)
        replication = int(flag_or_default(self.flags, "kafka_replication_factor"))
        self.assertEqual(replication, self.kafka["spec"]["replicas"])
        self.assertGreater(replication, int(self.properties["min.insync.replicas"]),
                           "one broker may be down while appends go on")

    def test_kafka_quorum_is_the_pods_by_dns(self):
        spec = self.kafka["spec"]
        self.assertEqual(spec["replicas"], 3)
        self.assertEqual(spec.get("podManagementPolicy"), "Parallel",
                         "the voters must start together to elect a leader")
        headless = self.named[("Service", spec["serviceName"])]["spec"]
        self.assertEqual(headless.get("clusterIP"), "None")
        self.assertIs(headless.get("publishNotReadyAddresses"), True,
                      "voters resolve each other before they are ready")
        voters = [f"{i}@{name}:9093"
                  for i, name in enumerate(self.pod_dns_names(self.kafka))]
        self.assertEqual(self.properties["controller.quorum.voters"].split(","), voters)
        self.assertEqual(self.properties["process.roles"], "broker,controller")
        self.assertIn("CONTROLLER://:9093", self.properties["listeners"])
        self.assertRegex(self.kafka_files["cluster.id"].strip(), CLUSTER_ID)

    def test_kafka_settings_that_acks_all_relies_on(self):
        self.assertEqual(self.properties["min.insync.replicas"], "2")
        self.assertEqual(self.properties["unclean.leader.election.enable"], "false")
        self.assertEqual(self.properties["default.replication.factor"], "3")
        self.assertEqual(self.properties["auto.create.topics.enable"], "false")
        self.assertEqual(self.properties["log.retention.ms"], "-1",
                         "a rebuilt node replays dictlog.records from offset 0")

    def test_kafka_pods_format_once_then_serve(self):
        pod = self.kafka["spec"]["template"]["spec"]
        (init,), (main,) = pod["initContainers"], pod["containers"]
        self.assertEqual(init.get("args"), ["format"])
        self.assertEqual(main.get("args"), ["serve"])
        for container in (init, main):
            self.assertEqual(container["image"], main["image"])
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            claims = {t["metadata"]["name"] for t in self.kafka["spec"]["volumeClaimTemplates"]}
            self.assertIn(mounts.get("/var/lib/kafka"), claims, "state on the PVC")
            config = next(v for v in pod["volumes"] if v["name"] == mounts["/etc/kafka"])
            self.assertEqual(config["configMap"]["name"], "kafka-config")
            env = self.env(container)
            self.assertEqual(env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"],
                             "metadata.name")

    def test_kafka_image(self):
        stages = dockerfile_stages(read("deploy/Dockerfile.kafka"))
        for from_line, _ in stages:
            self.assertRegex(from_line.split()[0], r"^debian:bookworm(-slim)?$", from_line)
        runtime = stages[-1]
        self.assertEqual(stage_packages(runtime), {"openjdk-17-jre-headless"})
        fetch = " ".join(instructions(stages[0], "RUN"))
        make = re.search(r"mvn [^&\n]*dependency:copy-dependencies", makefile_text())
        self.assertTrue(make, "the Makefile's kafka target runs mvn")
        self.assertIn(make.group(0).replace("$(KAFKA_POM)",
                                            "deploy/local-cluster/kafka/pom.xml"), fetch)
        entrypoint, cmd = image_argv(runtime)
        self.assertEqual(entrypoint, ["/bin/sh", "/usr/local/bin/kafka.sh"])
        copies = " ".join(instructions(runtime, "COPY"))
        self.assertIn("deploy/kafka/kafka.sh /usr/local/bin/kafka.sh", copies)
        user = instructions(runtime, "USER")[-1].split(":")[0]
        context = self.kafka["spec"]["template"]["spec"]["securityContext"]
        self.assertIs(context.get("runAsNonRoot"), True)
        self.assertEqual(context["runAsUser"], int(user), "same uid as the image")

    def test_disruption_budgets_and_anti_affinity(self):
        for statefulset in (self.kafka, self.dictlogd):
            name = statefulset["metadata"]["name"]
            labels = statefulset["spec"]["template"]["metadata"]["labels"]
            budgets = [d for d in self.documents if d["kind"] == "PodDisruptionBudget" and
                       labels_match(d["spec"]["selector"]["matchLabels"], labels)]
            self.assertEqual(len(budgets), 1, f"{name}: one PodDisruptionBudget")
            self.assertEqual(budgets[0]["spec"].get("maxUnavailable"), 1, name)
            terms = (statefulset["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
                     ["requiredDuringSchedulingIgnoredDuringExecution"])
            self.assertTrue(any(t["topologyKey"] == "kubernetes.io/hostname" and
                                labels_match(t["labelSelector"]["matchLabels"], labels)
                                for t in terms), f"{name}: one pod per node")

    def test_memory_limits_cover_caches_and_heaps(self):
        resources = self.container["resources"]
        grpc = int(flag_or_default(self.flags, "grpc_memory_bytes"))
        partitions = int(flag_or_default(self.flags, "kafka_partitions"))
        needed = (2 * grpc + partitions * KAFKA_PREFETCH_PER_PARTITION +
                  (int(flag_or_default(self.flags, "block_cache_mb")) << 20) +
                  int(flag_or_default(self.flags, "dictionary_cache_bytes")) +
                  MEMORY_OVERHEAD)
        self.assertGreaterEqual(memory_quantity(resources["limits"]["memory"]), needed)
        pod = self.kafka["spec"]["template"]["spec"]
        for container in pod["initContainers"] + pod["containers"]:
            heap = re.search(r"-Xmx(\d+)([mg])",
                             self.env(container)["KAFKA_HEAP_OPTS"]["value"])
            self.assertTrue(heap, "KAFKA_HEAP_OPTS sets -Xmx")
            heap_bytes = int(heap.group(1)) << (20 if heap.group(2) == "m" else 30)
            limit = memory_quantity(container["resources"]["limits"]["memory"])
            self.assertGreaterEqual(limit, heap_bytes + JVM_OVERHEAD, container["name"])

    def test_dictlogd_secure_by_default_and_services(self):
        check_secure_by_default(self, self.flags)
        labels = self.dictlogd["spec"]["template"]["metadata"]["labels"]
        headless = self.named[("Service", self.dictlogd["spec"]["serviceName"])]["spec"]
        self.assertEqual(headless.get("clusterIP"), "None")
        client = self.named[("Service", "dictlogd")]["spec"]
        self.assertNotEqual(client.get("clusterIP"), "None")
        for spec in (headless, client):
            self.assertTrue(labels_match(spec["selector"], labels))

    def config_file(self):
        """(file name, contents) of dictlogd's --config, from the cluster ConfigMap."""
        pod = self.dictlogd["spec"]["template"]["spec"]
        path = self.flags["config"]
        mount = next(m for m in self.container["volumeMounts"]
                     if path.startswith(m["mountPath"].rstrip("/") + "/"))
        volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
        data = self.named[("ConfigMap", volume["configMap"]["name"])]["data"]
        return os.path.basename(path), data[os.path.relpath(path, mount["mountPath"])]

    def test_broker_applies_the_properties_and_dictlogd_serves_with_the_flags(self):
        if not os.path.isdir(KAFKA_LIB):
            self.fail(f"no Kafka jars in {KAFKA_LIB}: run `make kafka`")
        # One broker: copies and in-sync replicas of the internal topics as it can.
        single = {"default.replication.factor": "1", "offsets.topic.replication.factor": "1",
                  "transaction.state.log.replication.factor": "1",
                  "transaction.state.log.min.isr": "1"}
        with KafkaBroker(self.kafka_files, single) as broker:
            self.assertEqual([f.returncode for f in broker.formats], [0, 0], broker.log())
            self.assertIn("already formatted", broker.formats[1].stdout +
                          broker.formats[1].stderr, "the second format left the volume")
            self.assertTrue(broker.address, "the broker did not start:\n" + broker.log())
            applied = broker.config_values()
            for key, value in self.properties.items():
                self.assertTrue(key in applied, f"{key} is not a Kafka 4.4 broker setting")
                if key not in broker.overridden:
                    self.assertEqual(applied[key], value.replace(", ", ","), key)
            self.run_dictlogd_against(broker.address)

    def run_dictlogd_against(self, bootstrap):
        with tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR")) as pki:
            material = make_pki(pki, ["dictlogd"])
        secrets = {"/etc/dictlog/tls/tls.crt": material["tls.crt"],
                   "/etc/dictlog/tls/tls.key": material["tls.key"],
                   "/etc/dictlog/tls/ca.crt": material["ca.crt"],
                   "/etc/dictlog/tokens/tokens": f"{TEST_TOKEN} admin\n",
                   "/etc/dictlog/tokens/metrics": METRICS_TOKEN, "/token": TEST_TOKEN,
                   "/record": "a probe record\n"}
        name, contents = self.config_file()
        secrets[self.flags["config"]] = contents
        flags = {k: self.expanded(v) for k, v in self.flags.items()}
        # One node of the three runs here: it holds every partition (with the
        # manifest's --cluster_replicas=2 it would forward reads of the others' to
        # pods that do not exist).
        flags.update(kafka_bootstrap=bootstrap, kafka_replication_factor="1",
                     cluster_replicas="0")
        with Served(flags, secrets) as server:
            self.assertTrue(server.address, "dictlogd did not serve:\n" + server.log())
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                result = server.run(self.container[probe]["exec"]["command"])
                self.assertEqual(result.stdout, "SERVING\n", f"{probe}: {result.stderr}")
            cli = ["dictlog", "--server=x", "--tls_ca=/etc/dictlog/tls/ca.crt",
                   "--tls_server_name=dictlogd", "--token_file=/token"]
            ids = server.run(cli + ["append", "--category=nginx", "/record"])
            self.assertEqual(ids.returncode, 0, ids.stderr + server.log())
            self.assertTrue(ids.stdout.startswith("web/"), ids.stdout)
            # Acknowledged, maybe not applied yet: UNAVAILABLE until it is.
            deadline = time.monotonic() + 30
            got = server.run(cli + ["get", ids.stdout.split()[0]])
            while "UNAVAILABLE" in got.stderr and time.monotonic() < deadline:
                got = server.run(cli + ["get", ids.stdout.split()[0]])
            self.assertEqual(got.returncode, 0, got.stderr + server.log())
            self.assertIn("a probe record", got.stdout)
            refused = server.run(cli + ["pool", "create", "fresh"])
            self.assertIn("FAILED_PRECONDITION", refused.stderr)
            self.assertEqual(server.stop(drain_grace(self.flags) + 30), 0)

if __name__ == "__main__":
    unittest.main()
