// The deployment files (k8s/ overlays, docker/) must agree with the admin's validated
// configuration: a renamed variable or a moved health route would otherwise only show up as a
// pod that silently runs on defaults or never turns ready.
import 'reflect-metadata';

import { environmentVariableNames } from '@sluice/config';
import {
  composeServices,
  containerOf,
  dockerHealthcheckPath,
  kafkaSecretTemplate,
  kafkaSecurityWiring,
  OVERLAYS,
  renderOverlay,
  secretTemplate,
} from '@sluice/config/deployment';

import { AdminEnvironment } from './config/admin-config';
import { HealthController } from './health/health.controller';

const known = environmentVariableNames(AdminEnvironment);

interface AdminPodSpec {
  containers: Array<{
    env: Array<{ name: string; value?: string; valueFrom?: unknown }>;
    volumeMounts: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  }>;
  volumes: Array<{
    name: string;
    secret: { secretName: string; items: Array<{ key: string; path: string }> };
  }>;
}
// The health routes as NestJS registered them (controller path + method path).
const healthRoute = (method: 'live' | 'ready') =>
  `/${Reflect.getMetadata('path', HealthController) as string}/${
    Reflect.getMetadata('path', HealthController.prototype[method]) as string
  }`;
const routes = [healthRoute('live'), healthRoute('ready')];

describe.each(OVERLAYS)('k8s/overlays/%s, as kubectl renders it', (overlay) => {
  const manifests = renderOverlay(overlay);
  const admin = containerOf(manifests, 'Deployment', 'sluice-admin');

  it('gives the admin only variables it validates, including the required token', () => {
    expect(known).toEqual(
      expect.arrayContaining(['SLUICE_ADMIN_TOKEN', 'DATABASE_URL', 'ADMIN_PORT']),
    );
    expect(admin.environment.filter((name) => !known.includes(name))).toEqual(
      // The ConfigMap is shared with the processors; these are theirs.
      ['CONSUMER_GROUP', 'SOURCE_PARTITIONS'],
    );
    expect(admin.environment).toEqual(
      expect.arrayContaining(['SLUICE_ADMIN_TOKEN', 'DATABASE_URL']),
    );
  });

  it("mounts the Secret's api-tokens.yaml where SLUICE_API_TOKENS_FILE points, and METRICS_TOKEN optionally", () => {
    expect(admin.environment).toEqual(
      expect.arrayContaining(['SLUICE_API_TOKENS_FILE', 'METRICS_TOKEN']),
    );
    const deployment = manifests.find(
      (m) => m.kind === 'Deployment' && m.metadata.name === 'sluice-admin',
    )!;
    const pod = (deployment.spec as { template: { spec: AdminPodSpec } }).template.spec;
    const container = pod.containers[0]!;
    const file = container.env.find((e) => e.name === 'SLUICE_API_TOKENS_FILE')!.value!;
    const mount = container.volumeMounts.find((m) => file.startsWith(`${m.mountPath}/`))!;
    expect(mount).toMatchObject({ readOnly: true });
    const volume = pod.volumes.find((v) => v.name === mount.name)!;
    expect(volume.secret.secretName).toBe('sluice-secrets');
    expect(volume.secret.items).toEqual([
      { key: 'api-tokens.yaml', path: file.slice(mount.mountPath.length + 1) },
    ]);
    const metrics = container.env.find((e) => e.name === 'METRICS_TOKEN')!;
    expect(metrics.valueFrom).toEqual({
      secretKeyRef: { name: 'sluice-secrets', key: 'METRICS_TOKEN', optional: true },
    });
  });

  it("reads a secured Kafka's settings from the optional Secrets of kafka-secret.template.yaml", () => {
    const wiring = kafkaSecurityWiring(manifests, 'sluice-admin');
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

  it.each([
    ['Deployment', 'sluice-admin'],
    ['Job', 'sluice-migrate'],
  ] as const)(
    "%s %s reads PostgreSQL's CA from the optional Secrets of secret.template.yaml",
    (kind, name) => {
      const workload = manifests.find((m) => m.kind === kind && m.metadata.name === name)!;
      const pod = (workload.spec as { template: { spec: AdminPodSpec } }).template.spec;
      const variable = pod.containers[0]!.env.find((e) => e.name === 'DATABASE_CA_FILE')!;
      expect(variable.valueFrom).toEqual({
        secretKeyRef: { name: 'sluice-secrets', key: 'DATABASE_CA_FILE', optional: true },
      });
      const template = secretTemplate('secret.template.yaml');
      const path = template['sluice-secrets']!['DATABASE_CA_FILE']!;
      const files = kafkaSecurityWiring(manifests, name, kind).secretMounts.find(
        (mount) => mount.secret === 'sluice-postgres-files',
      )!;
      expect(files).toMatchObject({ optional: true, readOnly: true });
      expect(path.startsWith(`${files.mountPath}/`)).toBe(true);
      expect(Object.keys(template['sluice-postgres-files']!)).toEqual([
        path.slice(files.mountPath.length + 1),
      ]);
      expect(known).toContain('DATABASE_CA_FILE');
    },
  );

  it('probes the real health routes on the port the admin listens on', () => {
    expect(routes).toEqual(['/health/live', '/health/ready']);
    expect(admin.probes.liveness).toEqual({ path: '/health/live', port: 3900 });
    expect(admin.probes.readiness).toEqual({ path: '/health/ready', port: 3900 });
    expect(admin.ports['http']).toBe(3900);
  });

  it('migrates with the admin image, in the namespace of everything else', () => {
    const migrate = containerOf(manifests, 'Job', 'sluice-migrate');
    expect(migrate.image.split(':')[0]).toBe(admin.image.split(':')[0]);
    expect(migrate.command).toEqual(['node', 'apps/admin/dist/migrate-main.js']);
    expect([...migrate.environment].sort()).toEqual(['DATABASE_CA_FILE', 'DATABASE_URL']);
    expect(
      new Set(manifests.filter((m) => m.kind !== 'Namespace').map((m) => m.metadata.namespace)),
    ).toEqual(new Set(['sluice']));
  });
});

describe('docker/', () => {
  const services = composeServices();

  it('runs the admin and its migration from the admin target with variables it validates', () => {
    for (const name of ['admin', 'migrate']) {
      const variables = Object.keys(services[name]!.environment ?? {});
      expect({ name, unknown: variables.filter((v) => !known.includes(v)) }).toEqual({
        name,
        unknown: [],
      });
    }
    expect(services['migrate']!.build?.target).toBe('admin');
    expect(services['migrate']!.command).toEqual(['node', 'apps/admin/dist/migrate-main.js']);
    expect(services['admin']!.image).toBe(services['migrate']!.image);
    expect(services['admin']!.ports).toEqual(['3900:3900']);
  });

  it('health-checks the admin image on its liveness route', () => {
    expect(dockerHealthcheckPath('admin')).toBe('/health/live');
  });
});
