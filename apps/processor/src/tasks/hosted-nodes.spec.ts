// The hosted nodes of a pipeline: state entries routed by their tag, changes prefixed with it,
// and each node's watermark the minimum over its own upstreams.
import { JsonText } from '@sluice/operators';
import type { StateEntry, StatefulStage } from '@sluice/operators';

import type { PlacedNode } from '../pipelines/active-pipeline';
import { HostedNodes } from './hosted-nodes';

/** A stage that remembers what it was given and hands out what a test puts in `changes`. */
function recordingStage(textKeys?: string) {
  const stage = {
    restoresJsonText:
      textKeys === undefined ? undefined : (key: string) => key.startsWith(textKeys),
    restored: [] as StateEntry[],
    advancedTo: [] as number[],
    changes: [] as StateEntry[],
    restore: (entries: Iterable<StateEntry>) => void stage.restored.push(...entries),
    advanceTo: (time: number) => void stage.advancedTo.push(time),
    onWallClock: () => undefined,
    drainChanges: () => stage.changes.splice(0),
    snapshot: () => stage.restored,
    size: () => stage.restored.length,
  };
  return stage;
}

function placed(tag: string | undefined, upstreams: string[]): PlacedNode {
  return {
    node: { id: tag ?? 'only', spec: { idleTimeoutMs: undefined } },
    sink: undefined,
    upstreams,
    tag,
    keyPrefix: tag === undefined ? '' : `${tag}|`,
  } as unknown as PlacedNode;
}

function host(nodes: PlacedNode[]) {
  const stages = new Map<string, ReturnType<typeof recordingStage>>();
  const hosted = new HostedNodes();
  hosted.reset(nodes, (node) => {
    const stage = recordingStage(node.tag === 'text' ? 't' : undefined);
    stages.set(node.tag ?? '', stage);
    return stage as unknown as StatefulStage;
  });
  return { hosted, stages };
}

describe('HostedNodes', () => {
  it('routes restored entries by their tag and drops those of a node no longer there', () => {
    const { hosted, stages } = host([placed('a', ['o/0']), placed('b', ['o/0'])]);
    hosted.restore([
      { key: 'a|w1', value: 1 },
      { key: 'b|w1', value: 2 },
      { key: 'gone|w1', value: 3 },
      { key: 'a|w2', value: 4 },
    ]);
    expect(stages.get('a')!.restored).toEqual([
      { key: 'w1', value: 1 },
      { key: 'w2', value: 4 },
    ]);
    expect(stages.get('b')!.restored).toEqual([{ key: 'w1', value: 2 }]);
    expect(hosted.size()).toBe(3);
    expect(hosted.keys().sort()).toEqual(['a|w1', 'a|w2', 'b|w1']);
  });

  it('parses restored JSON text unless the stage keeps that key as text', () => {
    const { hosted, stages } = host([placed('text', ['o/0']), placed('b', ['o/0'])]);
    const row = new JsonText('[[1,{"tier":"gold"}]]');
    hosted.restore([
      { key: 'text|tc1', value: row },
      { key: 'text|~watermark', value: new JsonText('5') },
      { key: 'b|w1', value: new JsonText('{"n":2}') },
      { key: 'b|w2', value: new JsonText('{"n":') },
      { key: 'b|w3', value: null },
    ]);
    expect(stages.get('text')!.restored).toEqual([
      { key: 'tc1', value: row },
      { key: '~watermark', value: 5 },
    ]);
    expect(stages.get('b')!.restored).toEqual([
      { key: 'w1', value: { n: 2 } },
      { key: 'w2', value: null },
      { key: 'w3', value: null },
    ]);

    const only = host([placed(undefined, ['o/0'])]);
    only.hosted.restore([{ key: 'w1', value: new JsonText('[1,2]') }]);
    expect(only.stages.get('')!.restored).toEqual([{ key: 'w1', value: [1, 2] }]);
  });

  it('gives an untagged only node its keys as they are', () => {
    const { hosted, stages } = host([placed(undefined, ['o/0'])]);
    hosted.restore([{ key: 'w1', value: 1 }]);
    stages.get('')!.changes.push({ key: 'w2', value: 2 });
    expect(stages.get('')!.restored).toEqual([{ key: 'w1', value: 1 }]);
    expect(hosted.drainChanges()).toEqual([{ key: 'w2', value: 2 }]);
    expect(hosted.get(undefined)).toBeDefined();
  });

  it('prefixes each node’s changes with its tag', () => {
    const { hosted, stages } = host([placed('a', ['o/0']), placed('b', ['o/0'])]);
    stages.get('a')!.changes.push({ key: 'w1', value: 1 });
    stages.get('b')!.changes.push({ key: 'w1', value: null });
    expect(hosted.drainChanges()).toEqual([
      { key: 'a|w1', value: 1 },
      { key: 'b|w1', value: null },
    ]);
    expect(hosted.drainChanges()).toEqual([]);
  });

  it('moves a node’s watermark to the minimum over its own upstreams only', () => {
    const { hosted, stages } = host([placed('a', ['o/0', 'o/1']), placed('b', ['p/0'])]);
    hosted.announce('o/0', 100, 0);
    hosted.announce('p/0', 50, 0);
    expect(stages.get('a')!.advancedTo).toEqual([]); // o/1 has announced nothing
    expect(stages.get('b')!.advancedTo).toEqual([50]);
    hosted.announce('o/1', 80, 0);
    hosted.announce('o/1', 120, 0);
    expect(stages.get('a')!.advancedTo).toEqual([80, 100]);
    expect(stages.get('b')!.advancedTo).toEqual([50]);
  });
});
