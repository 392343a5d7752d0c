"""Structural checks of deploy/: the Kubernetes manifests, the Dockerfile,
the Prometheus rules and the Grafana dashboard agree with each other and
with the binaries' flags. Run by ctest (tests/CMakeLists.txt) from the
repository root with Debian's python3 and python3-yaml."""

import glob
import json
import os
import re
import shutil
import subprocess
import unittest

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KUBE = os.path.join(ROOT, "deploy", "kubernetes")
OVERLAYS = ["sqlite", "postgres"]


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def flag_defaults(main_cc):
    """ABSL_FLAG(type, name, "default", ...) string defaults of a main.cc and
    of the flags both servers share."""
    text = read(main_cc) + read("common", "server", "server_flags.cc")
    return dict(re.findall(r'ABSL_FLAG\([^,]+,\s*(\w+),\s*"([^"]*)"', text))


def flag_names(main_cc):
    """Flags of a main.cc and those it shares: every process's
    (common/server/server_flags.cc) and, for the gRPC services, the server's
    (common/server/grpc_server_flags.cc; the web front serves no gRPC)."""
    text = read(main_cc) + read("common", "server", "server_flags.cc")
    if not main_cc.startswith("web/"):
        text += read("common", "server", "grpc_server_flags.cc")
    return set(re.findall(r"ABSL_FLAG\([^,]+,\s*(\w+),", text))


def documents(overlay):
    """The overlay's objects: kustomize's output when kubectl is present,
    else the base and overlay files read directly."""
    if shutil.which("kubectl"):
        out = subprocess.run(["kubectl", "kustomize", os.path.join(KUBE, "overlays", overlay)],
                             check=True, capture_output=True, text=True).stdout
        return [d for d in yaml.safe_load_all(out) if d]
    docs = []
    for directory in (os.path.join(KUBE, "base"), os.path.join(KUBE, "overlays", overlay)):
        for path in sorted(glob.glob(os.path.join(directory, "*.yaml"))):
            if os.path.basename(path) == "kustomization.yaml":
                continue
            with open(path, encoding="utf-8") as f:
                docs.extend(d for d in yaml.safe_load_all(f) if d)
    return docs


def workloads(docs):
    return [d for d in docs if d["kind"] in ("Deployment", "StatefulSet")]


class KubernetesTest(unittest.TestCase):
    def test_every_container_is_bounded_probed_and_locked_down(self):
        for overlay in OVERLAYS:
            for workload in workloads(documents(overlay)):
                spec = workload["spec"]["template"]["spec"]
                self.assertTrue(spec["securityContext"]["runAsNonRoot"], workload["metadata"]["name"])
                self.assertFalse(spec.get("automountServiceAccountToken", True))
                for container in spec["containers"]:
                    name = f'{overlay}/{container["name"]}'
                    for bound in ("requests", "limits"):
                        self.assertIn("cpu", container["resources"][bound], name)
                        self.assertIn("memory", container["resources"][bound], name)
                    ports = {p["containerPort"] for p in container["ports"]}
                    for probe, service, path in (("readinessProbe", "readiness", "/readyz"),
                                                 ("livenessProbe", "liveness", "/healthz")):
                        if "httpGet" in container[probe]:  # the web front
                            http = container[probe]["httpGet"]
                            self.assertIn(http["port"], ports, f"{name} {probe} port")
                            self.assertEqual(http["path"], path, f"{name} {probe}")
                            continue
                        grpc = container[probe]["grpc"]
                        self.assertIn(grpc["port"], ports, f"{name} {probe} port")
                        self.assertEqual(grpc["service"], service, f"{name} {probe}")
                    security = container["securityContext"]
                    self.assertTrue(security["readOnlyRootFilesystem"], name)
                    self.assertFalse(security["allowPrivilegeEscalation"], name)

    def test_services_select_workloads_and_name_their_ports(self):
        for overlay in OVERLAYS:
            docs = documents(overlay)
            for service in (d for d in docs if d["kind"] == "Service"):
                selector = service["spec"]["selector"]
                matched = [w for w in workloads(docs)
                           if selector.items() <= w["spec"]["template"]["metadata"]["labels"].items()]
                self.assertEqual(len(matched), 1, f'{overlay}: {service["metadata"]["name"]}')
                self.assertEqual(service["spec"]["clusterIP"], "None", "headless, for per-call balancing")
                port_names = {p["name"] for c in matched[0]["spec"]["template"]["spec"]["containers"]
                              for p in c["ports"]}
                for port in service["spec"]["ports"]:
                    self.assertIn(port["targetPort"], port_names)
            for workload in workloads(docs):
                self.assertEqual(workload["spec"]["selector"]["matchLabels"].items()
                                 <= workload["spec"]["template"]["metadata"]["labels"].items(), True)

    def test_ports_images_and_environment_match_the_binaries(self):
        binaries = {"catalog-service": ("catalog-service/main.cc", "MODELATLAS_CATALOG_"),
                    "estimator-service": ("estimator-service/main.cc", "MODELATLAS_ESTIMATOR_"),
                    "modelatlas-web": ("web/main.cc", "MODELATLAS_WEB_")}
        dockerfile = read("deploy", "docker", "Dockerfile")
        for overlay in OVERLAYS:
            docs = documents(overlay)
            config = {d["metadata"]["name"]: d["data"] for d in docs if d["kind"] == "ConfigMap"}
            for workload in workloads(docs):
                container = workload["spec"]["template"]["spec"]["containers"][0]
                main_cc, prefix = binaries[container["name"]]
                defaults = flag_defaults(main_cc)
                names = flag_names(main_cc)
                ports = {p["name"]: p["containerPort"] for p in container["ports"]}
                serving = "http" if "http" in ports else "grpc"  # the web front serves HTTP
                self.assertEqual(str(ports[serving]),
                                 defaults[f"{serving}_address"].rsplit(":", 1)[1])
                self.assertEqual(str(ports["metrics"]), defaults["metrics_address"].rsplit(":", 1)[1])
                annotations = workload["spec"]["template"]["metadata"]["annotations"]
                self.assertEqual(annotations["prometheus.io/port"], str(ports["metrics"]))
                # Every environment variable names a real flag.
                env = dict(config[container["envFrom"][0]["configMapRef"]["name"]])
                env.update({e["name"]: e.get("value") for e in container.get("env", [])})
                for key in env:
                    self.assertTrue(key.startswith(prefix), key)
                    self.assertIn(key[len(prefix):].lower(), names, f"{key} is not a flag")
                # The image is a target of the Dockerfile, exposing these ports.
                image = container["image"].split("/")[-1].split(":")[0]
                stage = re.search(rf"FROM runtime AS {image}\n(.*?)(?:\nFROM|\Z)", dockerfile, re.S)
                self.assertIsNotNone(stage, f"no Dockerfile target {image}")
                self.assertIn(f'EXPOSE {ports[serving]} {ports["metrics"]}', stage.group(1))

    def test_sqlite_has_one_replica_and_postgres_reads_a_secret(self):
        sqlite = [w for w in workloads(documents("sqlite")) if w["metadata"]["name"] == "catalog-service"]
        self.assertEqual(sqlite[0]["kind"], "StatefulSet")
        self.assertEqual(sqlite[0]["spec"]["replicas"], 1)
        postgres = [w for w in workloads(documents("postgres")) if w["metadata"]["name"] == "catalog-service"]
        self.assertEqual(postgres[0]["kind"], "Deployment")
        self.assertGreater(postgres[0]["spec"]["replicas"], 1)
        env = postgres[0]["spec"]["template"]["spec"]["containers"][0]["env"]
        secret = [e for e in env if e["name"] == "MODELATLAS_CATALOG_POSTGRES_URL"][0]
        self.assertIn("secretKeyRef", secret["valueFrom"])

    def test_autoscaler_and_budgets_target_real_workloads(self):
        docs = documents("sqlite")
        names = {(w["kind"], w["metadata"]["name"]) for w in workloads(docs)}
        hpa = [d for d in docs if d["kind"] == "HorizontalPodAutoscaler"][0]
        target = hpa["spec"]["scaleTargetRef"]
        self.assertIn((target["kind"], target["name"]), names)
        self.assertEqual(hpa["spec"]["metrics"][0]["resource"]["name"], "cpu")
        budgets = [d for d in docs if d["kind"] == "PodDisruptionBudget"]
        self.assertEqual(len(budgets), 3)


class DashboardTest(unittest.TestCase):
    def setUp(self):
        self.dashboard = json.loads(read("deploy", "grafana", "modelatlas.json"))
        self.panels = [p for p in self.dashboard["panels"] if p["type"] != "row"]

    def test_one_datasource_variable_used_by_every_panel(self):
        variables = self.dashboard["templating"]["list"]
        datasources = [v for v in variables if v["type"] == "datasource"]
        self.assertEqual(len(datasources), 1)
        self.assertEqual(datasources[0]["query"], "prometheus")
        for panel in self.panels:
            self.assertEqual(panel["datasource"]["uid"], "${datasource}", panel["title"])

    def test_every_query_has_a_job_matcher_and_rate_interval(self):
        for panel in self.panels:
            self.assertTrue(panel["targets"], panel["title"])
            for target in panel["targets"]:
                expr = target["expr"]
                for selector in re.findall(r"\b[a-z_:]+\{([^}]*)\}", expr):
                    self.assertRegex(selector, r"\bjob=~?\"", f'{panel["title"]}: {expr}')
                for window in re.findall(r"\b(?:rate|increase)\([^\[]*\[([^\]]+)\]", expr):
                    self.assertEqual(window, "$__rate_interval", f'{panel["title"]}: {expr}')

    def test_red_panels_for_both_services_and_the_operational_ones(self):
        titles = " | ".join(p["title"] for p in self.panels)
        for service in ("Catalog", "Estimator"):
            for what in ("requests per method", "errors per method", "duration per method"):
                self.assertIn(f"{service}: {what}", titles)
        for needed in ("client calls", "records by kind", "revision", "store latency",
                       "snapshot age", "CPU", "Resident memory"):
            self.assertIn(needed, titles)
        self.assertEqual(len({p["id"] for p in self.dashboard["panels"]}), len(self.dashboard["panels"]))
        for panel in self.panels:
            self.assertTrue(panel["fieldConfig"]["defaults"]["unit"], panel["title"])


class PrometheusRulesTest(unittest.TestCase):
    def test_alerts_use_recorded_series_that_exist(self):
        recording = yaml.safe_load(read("deploy", "prometheus", "rules", "recording.yml"))
        alerts = yaml.safe_load(read("deploy", "prometheus", "rules", "alerts.yml"))
        recorded = {r["record"] for g in recording["groups"] for r in g["rules"]}
        names = set()
        for group in alerts["groups"]:
            for rule in group["rules"]:
                names.add(rule["alert"])
                self.assertIn("severity", rule["labels"])
                for series in re.findall(r"\b([a-z_]+:[a-z0-9_:]+)", rule["expr"]):
                    self.assertIn(series, recorded, rule["alert"])
        for needed in ("ModelAtlasHighErrorRatio", "ModelAtlasHighLatency",
                       "ModelAtlasEstimatorCannotReachCatalog", "ModelAtlasCatalogStoreErrors",
                       "ModelAtlasImportRejectedRows", "ModelAtlasTargetDown"):
            self.assertIn(needed, names)


if __name__ == "__main__":
    unittest.main()
