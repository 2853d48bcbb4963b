#!/usr/bin/env python3
"""Checks the deploy/ files against each other and against the real binaries.

Kubernetes manifests (every YAML under deploy/k8s), the systemd unit and the Dockerfile
are parsed and their fields that matter are compared with what dictlogd does: its drain
grace (read from `dictlogd --help`, or a --shutdown_grace_seconds in the manifests),
its data directory and port (the flags each file passes), the shared libraries it links
(ldd, mapped to Debian packages with dpkg), and the build packages in the Makefile. The
ConfigMap's config file is given to the Bazel-built dictlogd, which must serve with it
(on 127.0.0.1 port 0, data under $TEST_TMPDIR), create the pools it declares, route
a record of each rule's category to the rule's pool and exit 0 on SIGTERM.
Run: bazel test //deploy:all
"""
import json
import os
import re
import shlex
import subprocess
import tempfile
import unittest

from deploy.deploy_files import (
    DICTLOG, DICTLOGD, Dictlogd, config_pools, config_routes, dependency_closure,
    dockerfile_stages, drain_grace, flag_values, installed_packages, instructions,
    labels_match, linked_library_paths, listen_host_port, load_k8s_documents,
    makefile_packages, owning_packages, parse_unit, read, stage_packages,
    systemd_seconds)

# Packages the Makefile installs for tests only; the image build does not need them.
TEST_ONLY_PACKAGES = {"python3-yaml", "python3-grpcio", "python3-protobuf",
                      "python3-zstandard", "prometheus", "python3-venv"}
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
        cls.entrypoint = json.loads(instructions(cls.runtime, "ENTRYPOINT")[-1])
        cls.flags = flag_values(cls.entrypoint[1:])

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
        for target in ("//server/service:dictlogd", "//client/cli:dictlog"):
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

    def test_plaintext_off_loopback_is_asked_for(self):
        # dictlogd refuses plaintext on a non-loopback address without --insecure.
        self.assertTrue("tls_cert" in self.flags or self.flags.get("insecure") == "true",
                        "TLS or --insecure=true (docs/security.md)")

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

    def test_plaintext_off_loopback_is_asked_for(self):
        # dictlogd refuses plaintext on a non-loopback address without --insecure.
        self.assertTrue("tls_cert" in self.flags or self.flags.get("insecure") == "true",
                        "TLS or --insecure=true (docs/security.md)")

    def test_sections(self):
        self.assertEqual(set(self.unit), {"Unit", "Service", "Install"})
        self.assertIn("multi-user.target", self.unit["Install"].get("WantedBy", []))

    def test_runs_dictlogd_as_user_with_state_directory(self):
        self.assertEqual(os.path.basename(self.argv[0].lstrip("-@+!:")), "dictlogd")
        self.assertNotIn(self.last("User", "root"), ("root", "0"))
        state = self.last("StateDirectory")
        writable = ["/var/lib/" + state] if state else []
        writable += " ".join(self.service.get("ReadWritePaths", [])).split()
        self.assertIn(self.flags.get("data_dir"), writable,
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
            with open(unit, "w") as f:  # the binary must exist for verify
                f.write(self.text.replace(self.argv[0], DICTLOGD, 1))
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
        # The image's ENTRYPOINT runs first unless the container replaces it.
        stages = dockerfile_stages(read("deploy/Dockerfile"))
        entrypoint = json.loads(instructions(stages[-1], "ENTRYPOINT")[-1])
        argv = cls.container.get("command", entrypoint) + cls.container.get("args", [])
        cls.flags = flag_values(argv)

    def test_plaintext_off_loopback_is_asked_for(self):
        # dictlogd refuses plaintext on a non-loopback address without --insecure.
        self.assertTrue("tls_cert" in self.flags or self.flags.get("insecure") == "true",
                        "TLS or --insecure=true (docs/security.md)")

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

    def test_probes_are_grpc_health_on_the_port(self):
        port = self.container_port()["containerPort"]
        for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
            if probe == "startupProbe" and probe not in self.container:
                continue
            spec = self.container[probe]
            self.assertEqual(spec.get("grpc", {}).get("port"), port, probe)
            self.assertEqual(spec["grpc"].get("service", ""), "", probe)
            self.assertFalse({"httpGet", "tcpSocket", "exec"} & set(spec), probe)

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


if __name__ == "__main__":
    unittest.main()
