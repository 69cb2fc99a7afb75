// Validates Brigade's deployment files offline, without a cluster:
//
//   node tests/deploy/validate.mjs [--root DIR] [--metrics-out FILE]
//
// * every Kubernetes object under deploy/kubernetes and deploy/kserve, and the output of
//   `kubectl kustomize deploy/kubernetes` when kubectl is installed, against the Kubernetes
//   OpenAPI schemas that npm's kubernetes-models compiles (ServiceMonitor against
//   @kubernetes-models/prometheus-operator's CRD schema);
// * KServe's ClusterServingRuntime and InferenceService, for which no npm package carries the CRD
//   schemas, against the structural schemas in kserve_schemas.mjs (written here, closed objects,
//   so a misspelt field fails), their containers against the Kubernetes Container schema;
// * prometheus-adapter's rules (the ConfigMap's config.yaml) and the Grafana dashboard
//   (deploy/grafana/brigade.json) against structural schemas of their own;
// * the references between objects: selectors against pod labels, named ports, the HPA's target
//   and custom metric, the runtime an InferenceService names, the grace period against the
//   preStop hook and the drain timeout;
// * every PromQL expression (dashboard queries, adapter queries with their templates filled in)
//   through `promtool check rules`.
//
// Prints one line per checked item and a closing `N passed, N failed`; exits 1 when anything
// failed. --metrics-out writes the metric names the expressions read (a JSON array), which
// tests/deploy/test_deploy_manifests.py compares with a running server's /metrics. --root points
// at another copy of the repository (the tests break a copy to see the validator fail).

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import Ajv from "ajv";
import YAML from "yaml";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { Pod } from "kubernetes-models/v1/Pod";
import { Service } from "kubernetes-models/v1/Service";
import { ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";

import { ADAPTER_CONFIG, CLUSTER_SERVING_RUNTIME, GRAFANA_DASHBOARD, INFERENCE_SERVICE } from "./kserve_schemas.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
function option(name, fallback) {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
}
const root = path.resolve(option("--root", path.join(here, "..", "..")));
const metricsOut = option("--metrics-out", null);

let passed = 0;
let failed = 0;
function pass(what) {
  passed++;
  console.log(`ok    ${what}`);
}
function fail(what, why) {
  failed++;
  console.log(`FAIL  ${what}: ${why}`);
}
function check(what, fn) {
  try {
    const note = fn();
    pass(note ? `${what} (${note})` : what);
  } catch (e) {
    fail(what, e.message.split("\n").slice(0, 6).join("; "));
  }
}
function require_(condition, message) {
  if (!condition) throw new Error(message);
}

const ajv = new Ajv({ allErrors: true });
function schemaValidator(schema) {
  const compiled = ajv.compile(schema);
  return (object) => {
    if (!compiled(object)) {
      throw new Error(compiled.errors.map((e) => `${e.instancePath || "/"} ${e.message}` +
        (e.params.additionalProperty ? ` '${e.params.additionalProperty}'` : "")).join("; "));
    }
  };
}

// Containers of a KServe runtime are Kubernetes containers: check them as a Pod's.
function validateContainers(containers) {
  new Pod({ metadata: { name: "containers" }, spec: { containers } }).validate();
}
const validateRuntime = schemaValidator(CLUSTER_SERVING_RUNTIME);
const validateInferenceService = schemaValidator(INFERENCE_SERVICE);
const validateAdapterConfig = schemaValidator(ADAPTER_CONFIG);
const validateDashboard = schemaValidator(GRAFANA_DASHBOARD);

const kinds = {
  "v1/Namespace": (o) => new Namespace(o).validate(),
  "v1/Service": (o) => new Service(o).validate(),
  "v1/ConfigMap": (o) => new ConfigMap(o).validate(),
  "apps/v1/Deployment": (o) => new Deployment(o).validate(),
  "policy/v1/PodDisruptionBudget": (o) => new PodDisruptionBudget(o).validate(),
  "autoscaling/v2/HorizontalPodAutoscaler": (o) => new HorizontalPodAutoscaler(o).validate(),
  "monitoring.coreos.com/v1/ServiceMonitor": (o) => new ServiceMonitor(o).validate(),
  "serving.kserve.io/v1alpha1/ClusterServingRuntime": (o) => {
    validateRuntime(o);
    validateContainers(o.spec.containers);
    return "structural schema + Kubernetes Container schema";
  },
  "serving.kserve.io/v1beta1/InferenceService": (o) => {
    validateInferenceService(o);
    return "structural schema";
  },
};

function readDocuments(file) {
  const text = fs.readFileSync(file, "utf8");
  return YAML.parseAllDocuments(text).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0].message}`);
    return doc.toJS();
  }).filter((o) => o !== null);
}

function validateObject(source, object) {
  const key = `${object.apiVersion}/${object.kind}`;
  const name = object.metadata?.name ?? "(unnamed)";
  check(`${source}: ${key} ${name}`, () => {
    const validate = kinds[key];
    require_(validate, `no schema for ${key}`);
    return validate(object) ?? "Kubernetes OpenAPI schema";
  });
}

// ---- the files, one object at a time -------------------------------------------------------
const objects = [];
for (const dir of ["deploy/kubernetes", "deploy/kserve"]) {
  for (const name of fs.readdirSync(path.join(root, dir)).sort()) {
    if (!name.endsWith(".yaml") || name === "kustomization.yaml") continue;
    const source = `${dir}/${name}`;
    let documents;
    try {
      documents = readDocuments(path.join(root, source));
    } catch (e) {
      fail(source, e.message);
      continue;
    }
    for (const object of documents) {
      validateObject(source, object);
      objects.push({ source, object });
    }
  }
}

// ---- the kustomization ---------------------------------------------------------------------
const kustomizationFile = path.join(root, "deploy/kubernetes/kustomization.yaml");
check("deploy/kubernetes/kustomization.yaml: resources exist", () => {
  const kustomization = YAML.parse(fs.readFileSync(kustomizationFile, "utf8"));
  for (const resource of kustomization.resources) {
    require_(fs.existsSync(path.join(root, "deploy/kubernetes", resource)), `${resource} is missing`);
  }
  return `${kustomization.resources.length} resources`;
});
let kubectl = null;
try {
  execFileSync("kubectl", ["version", "--client"], { stdio: "ignore" });
  kubectl = "kubectl";
} catch {
  console.log("note  kubectl not installed: the kustomization's output is not rendered");
}
if (kubectl) {
  let rendered = null;
  check("kubectl kustomize deploy/kubernetes", () => {
    rendered = YAML.parseAllDocuments(execFileSync(kubectl,
      ["kustomize", path.join(root, "deploy/kubernetes")], { encoding: "utf8" })).map((d) => d.toJS());
    require_(rendered.every((o) => o.kind === "Namespace" || o.metadata.namespace === "brigade"),
      "an object is outside the namespace brigade");
    return `${rendered.length} objects`;
  });
  for (const object of rendered ?? []) validateObject("kustomize output", object);
}

// ---- references between objects -----------------------------------------------------------
function find(kind, name) {
  return objects.find((o) => o.object.kind === kind && (!name || o.object.metadata.name === name))?.object;
}
function selects(selector, labels) {
  return Object.entries(selector ?? {}).every(([k, v]) => labels?.[k] === v);
}
const deployment = find("Deployment");
const service = find("Service");
const hpa = find("HorizontalPodAutoscaler");
const pdb = find("PodDisruptionBudget");
const monitor = find("ServiceMonitor");
const adapter = find("ConfigMap", "adapter-config");
const runtime = find("ClusterServingRuntime");
const isvc = find("InferenceService");

function flagValue(container, flag) {
  const arg = (container.args ?? []).find((a) => a.startsWith(`${flag}=`));
  return arg === undefined ? undefined : arg.slice(flag.length + 1);
}

check("Deployment: selector matches its pod labels", () => {
  require_(selects(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels),
    "spec.selector.matchLabels does not select spec.template.metadata.labels");
});
const container = deployment?.spec.template.spec.containers[0];
const containerPorts = new Map((container?.ports ?? []).map((p) => [p.name, p.containerPort]));
check("Deployment: probes use the v2 health endpoints on a declared port", () => {
  const probes = { startupProbe: "/v2/health/ready", readinessProbe: "/v2/health/ready",
                   livenessProbe: "/v2/health/live" };
  for (const [probe, wanted] of Object.entries(probes)) {
    const get = container[probe]?.httpGet;
    require_(get, `${probe} is missing or not httpGet`);
    require_(get.path === wanted, `${probe}.httpGet.path is ${get.path}, not ${wanted}`);
    require_(containerPorts.has(get.port), `${probe}.httpGet.port '${get.port}' is not a container port`);
  }
});
check("Deployment: ports match the serve flags", () => {
  const flags = { http: "--http-port", grpc: "--grpc-port", metrics: "--metrics-port" };
  for (const [port, flag] of Object.entries(flags)) {
    require_(String(containerPorts.get(port)) === flagValue(container, flag),
      `port '${port}' is ${containerPorts.get(port)} but ${flag} is ${flagValue(container, flag)}`);
  }
});
check("Deployment: Guaranteed resources, CPUs cover the HTTP and OMP threads", () => {
  const { requests, limits } = container.resources;
  require_(requests.cpu === limits.cpu && requests.memory === limits.memory,
    "requests differ from limits (not Guaranteed QoS)");
  const cpus = Number(requests.cpu);
  require_(Number.isInteger(cpus), `cpu ${requests.cpu} is not whole CPUs (the CPU manager pins only those)`);
  const http = Number(flagValue(container, "--http-thread-count"));
  const omp = Number(container.env.find((e) => e.name === "OMP_NUM_THREADS")?.value);
  require_(http + omp <= cpus, `--http-thread-count ${http} + OMP_NUM_THREADS ${omp} > ${cpus} CPUs`);
  return `${cpus} CPUs for ${http} HTTP + ${omp} compute threads`;
});
check("Deployment: grace period covers preStop and the drain", () => {
  const command = container.lifecycle.preStop.exec.command;
  require_(command[0] === "sleep", "preStop is not a sleep");
  const sleep = Number(command[1]);
  const drain = Number(flagValue(container, "--exit-timeout-secs"));
  const grace = deployment.spec.template.spec.terminationGracePeriodSeconds;
  require_(sleep + drain < grace, `preStop ${sleep} s + drain ${drain} s >= grace ${grace} s`);
  return `${sleep} s + ${drain} s < ${grace} s`;
});
check("Service: selects the pods, target ports are container ports", () => {
  require_(selects(service.spec.selector, deployment.spec.template.metadata.labels),
    "spec.selector does not select the Deployment's pods");
  for (const port of service.spec.ports) {
    require_(containerPorts.has(port.targetPort), `targetPort '${port.targetPort}' is not a container port`);
  }
});
check("PodDisruptionBudget: selects the pods", () => {
  require_(selects(pdb.spec.selector.matchLabels, deployment.spec.template.metadata.labels),
    "spec.selector does not select the Deployment's pods");
});
check("ServiceMonitor: selects the Service, scrapes a Service port", () => {
  require_(selects(monitor.spec.selector.matchLabels, service.metadata.labels),
    "spec.selector does not select the Service's labels");
  const names = service.spec.ports.map((p) => p.name);
  for (const endpoint of monitor.spec.endpoints) {
    require_(names.includes(endpoint.port), `endpoint port '${endpoint.port}' is not a Service port`);
  }
});

let adapterRules = [];
check("prometheus-adapter config.yaml: rule schema", () => {
  const config = YAML.parse(adapter.data["config.yaml"]);
  validateAdapterConfig(config);
  adapterRules = config.rules;
  return `${adapterRules.length} rules, structural schema`;
});
check("HorizontalPodAutoscaler: targets the Deployment; its custom metric has an adapter rule", () => {
  require_(hpa.spec.scaleTargetRef.kind === "Deployment" &&
    hpa.spec.scaleTargetRef.name === deployment.metadata.name, "scaleTargetRef is not the Deployment");
  const published = adapterRules.map((r) => r.name.as);
  for (const metric of hpa.spec.metrics.filter((m) => m.type === "Pods")) {
    require_(published.includes(metric.pods.metric.name),
      `metric '${metric.pods.metric.name}' is not published by an adapter rule (${published.join(", ")})`);
  }
  require_(hpa.spec.metrics.some((m) => m.type === "Resource" && m.resource.name === "cpu"),
    "no CPU metric");
});
check("InferenceService: names the runtime and one of its model formats", () => {
  const model = isvc.spec.predictor.model;
  require_(model.runtime === runtime.metadata.name, `runtime '${model.runtime}' is not '${runtime.metadata.name}'`);
  const formats = runtime.spec.supportedModelFormats.map((f) => f.name);
  require_(formats.includes(model.modelFormat.name), `format '${model.modelFormat.name}' not in ${formats}`);
  require_(runtime.spec.protocolVersions.includes(model.protocolVersion ?? "v1"),
    `protocol ${model.protocolVersion} not in the runtime's ${runtime.spec.protocolVersions}`);
  require_(flagValue(runtime.spec.containers[0], "--model-repository") === "/mnt/models",
    "the runtime does not serve /mnt/models, where KServe puts storageUri");
});

// ---- Grafana and PromQL --------------------------------------------------------------------
const expressions = [];
const dashboardFile = "deploy/grafana/brigade.json";
check(`${dashboardFile}: dashboard schema`, () => {
  const dashboard = JSON.parse(fs.readFileSync(path.join(root, dashboardFile), "utf8"));
  validateDashboard(dashboard);
  const ids = new Set();
  for (const panel of dashboard.panels) {
    require_(!ids.has(panel.id), `panel id ${panel.id} repeats`);
    ids.add(panel.id);
    for (const target of panel.targets) expressions.push({ where: `panel '${panel.title}'`, expr: target.expr });
  }
  return `${dashboard.panels.length} panels, ${expressions.length} queries`;
});
for (const rule of adapterRules) {
  const series = rule.seriesQuery.match(/^[a-zA-Z_:][a-zA-Z0-9_:]*/)[0];
  // The adapter fills these templates in per request; any plausible values make valid PromQL.
  const expr = rule.metricsQuery.replaceAll("<<.Series>>", series)
    .replaceAll("<<.LabelMatchers>>", 'namespace="brigade",pod="brigade-0"').replaceAll("<<.GroupBy>>", "pod");
  expressions.push({ where: `adapter rule '${rule.name.as}'`, expr });
  expressions.push({ where: `adapter rule '${rule.name.as}' seriesQuery`, expr: rule.seriesQuery });
}
check(`promtool check rules: ${expressions.length} expressions`, () => {
  // Grafana's variables become constants Prometheus accepts.
  const rules = expressions.map((e, i) => ({ record: `brigade:check_${i}`,
    expr: e.expr.replaceAll("$__rate_interval", "1m").replaceAll("$model", ".*") }));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "brigade-validate-"));
  const file = path.join(dir, "rules.yaml");
  fs.writeFileSync(file, YAML.stringify({ groups: [{ name: "brigade", rules }] }));
  try {
    execFileSync("promtool", ["check", "rules", file], { encoding: "utf8", stdio: "pipe" });
  } catch (e) {
    throw new Error(`${e.stdout ?? ""}${e.stderr ?? e.message}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

const metrics = new Set();
for (const { expr } of expressions) {
  for (const m of expr.matchAll(/\b((?:brigade|nv)_[a-zA-Z0-9_]+)\b(?!\s*\()/g)) metrics.add(m[1]);
}
if (metricsOut) fs.writeFileSync(metricsOut, JSON.stringify([...metrics].sort()) + "\n");
console.log(`note  metrics read: ${[...metrics].sort().join(" ")}`);
console.log(`validate: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
