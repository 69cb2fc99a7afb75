// Structural JSON schemas for what no npm package carries a schema of: KServe's
// ClusterServingRuntime and InferenceService (the fields Brigade's manifests use, with the types
// KServe's API documents), prometheus-adapter's rule file, and a Grafana dashboard. They are
// written here, not KServe's CRD schemas: objects are closed (additionalProperties: false) so a
// misspelt or unknown field fails, which is stricter than the API server on the fields listed and
// blind to constraints KServe's controllers add. Containers are checked separately against the
// Kubernetes Container schema (validate.mjs).

const name = { type: "string", pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", maxLength: 63 };
const stringMap = { type: "object", additionalProperties: { type: "string" } };
const metadata = {
  type: "object",
  required: ["name"],
  additionalProperties: false,
  properties: { name, namespace: name, labels: stringMap, annotations: stringMap },
};
const quantity = { anyOf: [{ type: "string", pattern: "^[0-9.]+[a-zA-Z]*$" }, { type: "number" }] };
const resources = {
  type: "object",
  additionalProperties: false,
  properties: {
    requests: { type: "object", additionalProperties: quantity },
    limits: { type: "object", additionalProperties: quantity },
  },
};

export const CLUSTER_SERVING_RUNTIME = {
  type: "object",
  required: ["apiVersion", "kind", "metadata", "spec"],
  additionalProperties: false,
  properties: {
    apiVersion: { const: "serving.kserve.io/v1alpha1" },
    kind: { const: "ClusterServingRuntime" },
    metadata,
    spec: {
      type: "object",
      required: ["supportedModelFormats", "containers"],
      additionalProperties: false,
      properties: {
        annotations: stringMap,
        labels: stringMap,
        supportedModelFormats: {
          type: "array",
          minItems: 1,
          items: {
            type: "object",
            required: ["name"],
            additionalProperties: false,
            properties: {
              name: { type: "string", minLength: 1 },
              version: { type: "string" },
              autoSelect: { type: "boolean" },
              priority: { type: "integer", minimum: 1 },
            },
          },
        },
        protocolVersions: {
          type: "array",
          items: { enum: ["v1", "v2", "grpc-v1", "grpc-v2"] },
        },
        multiModel: { type: "boolean" },
        disabled: { type: "boolean" },
        // Kubernetes containers: validate.mjs checks them against the Container schema.
        containers: { type: "array", minItems: 1, items: { type: "object" } },
      },
    },
  },
};

export const INFERENCE_SERVICE = {
  type: "object",
  required: ["apiVersion", "kind", "metadata", "spec"],
  additionalProperties: false,
  properties: {
    apiVersion: { const: "serving.kserve.io/v1beta1" },
    kind: { const: "InferenceService" },
    metadata,
    spec: {
      type: "object",
      required: ["predictor"],
      additionalProperties: false,
      properties: {
        predictor: {
          type: "object",
          required: ["model"],
          additionalProperties: false,
          properties: {
            minReplicas: { type: "integer", minimum: 0 },
            maxReplicas: { type: "integer", minimum: 1 },
            scaleMetric: { enum: ["cpu", "memory", "concurrency", "rps"] },
            scaleTarget: { type: "integer", minimum: 1 },
            model: {
              type: "object",
              required: ["modelFormat", "storageUri"],
              additionalProperties: false,
              properties: {
                modelFormat: {
                  type: "object",
                  required: ["name"],
                  additionalProperties: false,
                  properties: { name: { type: "string" }, version: { type: "string" } },
                },
                runtime: name,
                protocolVersion: { enum: ["v1", "v2", "grpc-v1", "grpc-v2"] },
                storageUri: { type: "string", pattern: "^(pvc|gs|s3|https?|hdfs|oci)://." },
                resources,
              },
            },
          },
        },
      },
    },
  },
};

export const ADAPTER_CONFIG = {
  type: "object",
  required: ["rules"],
  additionalProperties: false,
  properties: {
    rules: {
      type: "array",
      minItems: 1,
      items: {
        type: "object",
        required: ["seriesQuery", "resources", "name", "metricsQuery"],
        additionalProperties: false,
        properties: {
          seriesQuery: { type: "string", minLength: 1 },
          resources: {
            type: "object",
            additionalProperties: false,
            properties: {
              overrides: {
                type: "object",
                additionalProperties: {
                  type: "object",
                  required: ["resource"],
                  additionalProperties: false,
                  properties: { resource: { type: "string" } },
                },
              },
              template: { type: "string" },
            },
          },
          name: {
            type: "object",
            required: ["matches"],
            additionalProperties: false,
            properties: { matches: { type: "string" }, as: { type: "string" } },
          },
          // The adapter fills in these three templates; without them the query ignores the pod.
          metricsQuery: {
            type: "string",
            allOf: [{ pattern: "<<\\.Series>>" }, { pattern: "<<\\.LabelMatchers>>" },
                    { pattern: "<<\\.GroupBy>>" }],
          },
        },
      },
    },
  },
};

const target = {
  type: "object",
  required: ["refId", "expr"],
  additionalProperties: false,
  properties: {
    refId: { type: "string" },
    expr: { type: "string", minLength: 1 },
    legendFormat: { type: "string" },
    datasource: { type: "object" },
  },
};

export const GRAFANA_DASHBOARD = {
  type: "object",
  required: ["uid", "title", "schemaVersion", "panels", "templating"],
  properties: {
    uid: { type: "string", pattern: "^[a-zA-Z0-9_-]{1,40}$" },
    title: { type: "string", minLength: 1 },
    schemaVersion: { type: "integer", minimum: 30 },
    templating: {
      type: "object",
      required: ["list"],
      properties: { list: { type: "array", items: { type: "object", required: ["name", "type"] } } },
    },
    panels: {
      type: "array",
      minItems: 1,
      items: {
        type: "object",
        required: ["id", "type", "title", "gridPos", "targets"],
        properties: {
          id: { type: "integer" },
          type: { enum: ["timeseries", "stat", "gauge", "bargauge", "table", "heatmap"] },
          title: { type: "string", minLength: 1 },
          gridPos: {
            type: "object",
            required: ["x", "y", "w", "h"],
            properties: {
              x: { type: "integer", minimum: 0, maximum: 23 },
              y: { type: "integer", minimum: 0 },
              w: { type: "integer", minimum: 1, maximum: 24 },
              h: { type: "integer", minimum: 1 },
            },
          },
          targets: { type: "array", minItems: 1, items: target },
        },
      },
    },
  },
};
