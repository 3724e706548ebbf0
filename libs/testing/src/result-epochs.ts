// Published results carry their pipeline's state epoch (docs/design.md §9); the reference run,
// which knows no epochs, does not. Comparisons take the epoch off, and check it separately.

/** `value` without its `epoch`, and the epoch (`undefined` when it had none). */
export function withoutEpoch(value: unknown): { value: unknown; epoch: string | undefined } {
  if (value === null || typeof value !== 'object' || !('epoch' in value))
    return { value, epoch: undefined };
  const { epoch, ...rest } = value as Record<string, unknown>;
  return { value: rest, epoch: typeof epoch === 'string' ? epoch : undefined };
}
