// The deployment files (k8s/ overlays, docker/) must agree with the processor's validated
// configuration and its observability server: names, ports and probe paths.
import 'reflect-metadata';

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { environmentVariableNames } from '@sluice/config';
import {
  composeServices,
  containerOf,
  dockerHealthcheckPath,
  kafkaSecretTemplate,
  kafkaSecurityWiring,
  OVERLAYS,
  renderOverlay,
  REPOSITORY_ROOT,
} from '@sluice/config/deployment';

import { ProcessorEnvironment } from './config/processor-config';
import { HEALTH_ROUTES } from './observability/http-server';

const known = environmentVariableNames(ProcessorEnvironment);

describe.each(OVERLAYS)('k8s/overlays/%s, as kubectl renders it', (overlay) => {
  const manifests = renderOverlay(overlay);
  const processor = containerOf(manifests, 'Deployment', 'sluice-processor');
  const deployment = manifests.find(
    (m) => m.kind === 'Deployment' && m.metadata.name === 'sluice-processor',
  )!;
  const podSpec = (deployment.spec as { template: { spec: Record<string, unknown> } }).template
    .spec;

  it("reads a secured Kafka's settings from the optional Secrets of kafka-secret.template.yaml", () => {
    const wiring = kafkaSecurityWiring(manifests, 'sluice-processor');
    expect(wiring.secretRefs).toContainEqual({ name: 'sluice-kafka', optional: true });
    const files = wiring.secretMounts.find((mount) => mount.secret === 'sluice-kafka-files')!;
    expect(files).toMatchObject({ optional: true, readOnly: true });
    const template = kafkaSecretTemplate();
    const variables = template['sluice-kafka']!;
    // Every variable the template sets is one the app validates, and every file it names is
    // one of the files Secret's keys, where the Deployment mounts them.
    expect(Object.keys(variables).filter((name) => !known.includes(name))).toEqual([]);
    const paths = Object.entries(variables)
      .filter(([name]) => name.endsWith('_FILE'))
      .map(([, path]) => path);
    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths) {
      expect(path.startsWith(`${files.mountPath}/`)).toBe(true);
      expect(Object.keys(template['sluice-kafka-files']!)).toContain(
        path.slice(files.mountPath.length + 1),
      );
    }
  });

  it('runs the topics Job with the same Kafka settings, mounted as the processor has them', () => {
    const job = kafkaSecurityWiring(manifests, 'sluice-topics', 'Job');
    const processorWiring = kafkaSecurityWiring(manifests, 'sluice-processor');
    // The same, and a Secret of its own over it (a user that may create the topics).
    expect(job).toEqual({
      ...processorWiring,
      secretRefs: [...processorWiring.secretRefs, { name: 'sluice-kafka-topics', optional: true }],
    });
    // Its script comes from the generated ConfigMap, whose data is k8s/base/topics-job.sh.
    const pod = (
      manifests.find((m) => m.kind === 'Job' && m.metadata.name === 'sluice-topics')!.spec as {
        template: { spec: { volumes: { name: string; configMap?: { name: string } }[] } };
      }
    ).template.spec;
    const scriptMap = pod.volumes.find((v) => v.name === 'script')!.configMap!.name;
    const generated = manifests.find(
      (m) => m.kind === 'ConfigMap' && m.metadata.name === scriptMap,
    );
    expect((generated as { data?: Record<string, string> }).data?.['topics-job.sh']).toBe(
      readFileSync(join(REPOSITORY_ROOT, 'k8s/base/topics-job.sh'), 'utf8'),
    );
  });

  it('gives the processor only variables it validates (the shared ConfigMap aside)', () => {
    expect(processor.environment.filter((name) => !known.includes(name))).toEqual([
      'SLUICE_OUTPUT_PARTITIONS',
    ]);
    expect(processor.environment).toEqual(
      expect.arrayContaining([
        'KAFKA_BROKERS',
        'SOURCE_TOPICS',
        'CONSUMER_GROUP',
        'PROCESSOR_ID',
        'METRICS_PORT',
      ]),
    );
  });

  it('names each replica after its pod and probes the real health routes on the metrics port', () => {
    const env = (podSpec['containers'] as { env: { name: string; valueFrom?: unknown }[] }[])[0]!
      .env;
    expect(env.find((e) => e.name === 'PROCESSOR_ID')?.valueFrom).toEqual({
      fieldRef: { fieldPath: 'metadata.name' },
    });
    // The admin's METRICS_TOKEN guards the replicas' /metrics too, when the Secret has one.
    expect(env.find((e) => e.name === 'METRICS_TOKEN')?.valueFrom).toEqual({
      secretKeyRef: { name: 'sluice-secrets', key: 'METRICS_TOKEN', optional: true },
    });
    expect(processor.ports['metrics']).toBe(9464);
    expect(processor.probes.liveness).toEqual({ path: HEALTH_ROUTES.live, port: 9464 });
    expect(processor.probes.readiness).toEqual({ path: HEALTH_ROUTES.ready, port: 9464 });
  });

  it('runs 3 replicas with a disruption budget and time to commit on SIGTERM', () => {
    expect((deployment.spec as { replicas: number }).replicas).toBe(3);
    expect(podSpec['terminationGracePeriodSeconds']).toBeGreaterThanOrEqual(30);
    const budget = manifests.find(
      (m) => m.kind === 'PodDisruptionBudget' && m.metadata.name === 'sluice-processor',
    );
    expect(budget?.spec).toMatchObject({
      selector: { matchLabels: { 'app.kubernetes.io/name': 'sluice-processor' } },
    });
    const scalers = manifests.filter((m) =>
      ['HorizontalPodAutoscaler', 'ScaledObject'].includes(m.kind),
    );
    expect(scalers.length).toBeGreaterThan(0);
    for (const scaler of scalers) {
      expect(JSON.stringify(scaler.spec)).toContain('sluice-processor');
    }
  });
});

describe('docker/', () => {
  const services = composeServices();

  it('runs two processors from the processor target with variables they validate', () => {
    for (const name of ['processor-1', 'processor-2']) {
      const service = services[name]!;
      const variables = Object.keys(service.environment ?? {});
      expect({ name, unknown: variables.filter((v) => !known.includes(v)) }).toEqual({
        name,
        unknown: [],
      });
      expect(service.build?.target).toBe('processor');
      expect(service.environment?.['PROCESSOR_ID']).toBe(name);
    }
  });

  it('health-checks the processor image on its liveness route', () => {
    expect(dockerHealthcheckPath('processor')).toBe(HEALTH_ROUTES.live);
  });
});
