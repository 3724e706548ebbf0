import { isGraph, isTableSource } from '@sluice/contracts';
import type { StoredPipeline } from '@sluice/contracts';
import type { StartPoint } from '@sluice/kafka';

/**
 * Where a source of `stored` starts in a run it has not read yet: `earliest` or a time (an
 * unreadable time reads it all). A replay starts its streams at its `from`, but a table always
 * at the topic's beginning: a join needs every row, however old.
 */
export function startPoint(stored: StoredPipeline, sourceId: string): StartPoint {
  const source = isGraph(stored) ? stored.sources.find((s) => s.id === sourceId) : undefined;
  const replaying = (stored.replay_generation ?? 0) > 0 && stored.replay_from !== undefined;
  const start =
    source && isTableSource(source)
      ? (source.start ?? 'earliest')
      : replaying
        ? stored.replay_from!
        : (source?.start ?? 'latest');
  if (start === 'earliest') return 'earliest';
  const time = Date.parse(start === 'latest' ? stored.created_at : start);
  return Number.isNaN(time) ? 0 : time;
}
