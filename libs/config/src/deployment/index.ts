// What the deployment files say about an app, for tests that hold them to the app's validated
// configuration: k8s/ overlays rendered with kubectl, and docker/compose.yml.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { parse, parseAllDocuments } from 'yaml';

export const REPOSITORY_ROOT = join(__dirname, '..', '..', '..', '..');
export const OVERLAYS = ['dev', 'prod', 'keda'] as const;

export interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  [field: string]: unknown;
}

/** The project's own kubectl (scripts/ensure-kubectl.sh), else one on the PATH. */
function kubectl(): string {
  const own = join(REPOSITORY_ROOT, '.local/kubectl/usr/bin/kubectl');
  return existsSync(own) ? own : 'kubectl';
}

/** `kubectl kustomize k8s/overlays/<overlay>`, parsed; throws with kubectl's message. */
export function renderOverlay(overlay: string): Manifest[] {
  const text = execFileSync(
    kubectl(),
    ['kustomize', join(REPOSITORY_ROOT, 'k8s/overlays', overlay)],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return parseAllDocuments(text)
    .map((document) => document.toJS() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null);
}

export interface ContainerView {
  image: string;
  /** Every variable the container gets: its own `env` and the keys of ConfigMaps in `envFrom`. */
  environment: string[];
  ports: Record<string, number>;
  probes: Record<'liveness' | 'readiness', { path: string; port: number } | undefined>;
  command: string[] | undefined;
}

interface ContainerSpec {
  name: string;
  image: string;
  command?: string[];
  env?: { name: string }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
}

/** The first container of a Deployment or Job, with names resolved against the manifests. */
export function containerOf(manifests: Manifest[], kind: string, name: string): ContainerView {
  const workload = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!workload) throw new Error(`no ${kind} ${name} in the rendered manifests`);
  const spec = workload.spec as { template: { spec: { containers: ContainerSpec[] } } };
  const container = spec.template.spec.containers[0]!;
  const ports = Object.fromEntries(
    (container.ports ?? []).map((p) => [p.name ?? String(p.containerPort), p.containerPort]),
  );
  // Secrets read as variables hold what the cluster's operator puts there: their keys are
  // checked against their templates instead (kafkaSecretTemplate).
  const fromConfigMaps = (container.envFrom ?? []).flatMap((source) => {
    if (!source.configMapRef) return [];
    const configMap = manifests.find(
      (m) => m.kind === 'ConfigMap' && m.metadata.name === source.configMapRef?.name,
    );
    if (!configMap) throw new Error(`${name} reads a ConfigMap that is not rendered`);
    return Object.keys(configMap.data ?? {});
  });
  const probe = (p: ContainerSpec['livenessProbe']) =>
    p?.httpGet
      ? {
          path: p.httpGet.path,
          port: typeof p.httpGet.port === 'number' ? p.httpGet.port : ports[p.httpGet.port]!,
        }
      : undefined;
  return {
    image: container.image,
    environment: [
      ...new Set([...(container.env ?? []).map((e) => e.name), ...fromConfigMaps]),
    ].sort(),
    ports,
    probes: {
      liveness: probe(container.livenessProbe),
      readiness: probe(container.readinessProbe),
    },
    command: container.command,
  };
}

export interface ComposeService {
  image?: string;
  build?: { target?: string };
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
}

/** docker/compose.yml's services (YAML anchors and merges resolved). */
export function composeServices(): Record<string, ComposeService> {
  const text = readFileSync(join(REPOSITORY_ROOT, 'docker/compose.yml'), 'utf8');
  return (parse(text, { merge: true }) as { services: Record<string, ComposeService> }).services;
}

/** The HEALTHCHECK path of a Dockerfile target (`--target admin`). */
export function dockerHealthcheckPath(target: string): string | undefined {
  const text = readFileSync(join(REPOSITORY_ROOT, 'docker/Dockerfile'), 'utf8');
  const stage = text
    .split(/^FROM /m)
    .find((s) => new RegExp(`AS ${target}\\s*$`, 'm').test(s.split('\n')[0]!));
  return stage
    ? /(\/health[\w/]*)/.exec(stage.slice(stage.indexOf('HEALTHCHECK')))?.[1]
    : undefined;
}

/** How a Deployment gets a secured Kafka's settings (k8s/base/kafka-secret.template.yaml). */
export interface KafkaSecurityWiring {
  /** Secrets read as variables (`envFrom.secretRef`), with whether each is optional. */
  secretRefs: Array<{ name: string; optional: boolean }>;
  /** Secret volumes and where the first container mounts them. */
  secretMounts: Array<{ secret: string; optional: boolean; mountPath: string; readOnly: boolean }>;
}

export function kafkaSecurityWiring(
  manifests: Manifest[],
  name: string,
  kind: 'Deployment' | 'Job' = 'Deployment',
): KafkaSecurityWiring {
  const workload = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!workload) throw new Error(`no ${kind} ${name} in the rendered manifests`);
  const pod = (workload.spec as { template: { spec: PodSpec } }).template.spec;
  const container = pod.containers[0]!;
  return {
    secretRefs: (container.envFrom ?? [])
      .filter((source) => source.secretRef)
      .map((source) => ({
        name: source.secretRef!.name,
        optional: source.secretRef!.optional === true,
      })),
    secretMounts: (container.volumeMounts ?? []).flatMap((mount) => {
      const volume = (pod.volumes ?? []).find((v) => v.name === mount.name);
      if (!volume?.secret) return [];
      return [
        {
          secret: volume.secret.secretName,
          optional: volume.secret.optional === true,
          mountPath: mount.mountPath,
          readOnly: mount.readOnly === true,
        },
      ];
    }),
  };
}

interface PodSpec {
  containers: Array<{
    envFrom?: Array<{ secretRef?: { name: string; optional?: boolean } }>;
    volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  }>;
  volumes?: Array<{ name: string; secret?: { secretName: string; optional?: boolean } }>;
}

/** The Secrets of k8s/base/kafka-secret.template.yaml, by name: their stringData. */
export function kafkaSecretTemplate(): Record<string, Record<string, string>> {
  return secretTemplate('kafka-secret.template.yaml');
}

/** The Secrets of a template in k8s/base (`secret.template.yaml`, say), by name: their stringData. */
export function secretTemplate(file: string): Record<string, Record<string, string>> {
  const text = readFileSync(join(REPOSITORY_ROOT, 'k8s/base', file), 'utf8');
  return Object.fromEntries(
    parseAllDocuments(text)
      .map(
        (document) =>
          document.toJS() as { metadata: { name: string }; stringData: Record<string, string> },
      )
      .map((secret) => [secret.metadata.name, secret.stringData]),
  );
}
