import type { MapOperator } from '@sluice/contracts';

import { compileGetter, compileSetter } from '../paths';
import { PASS, policyVerdict, unchangedUnlessError } from '../step';
import type { Step } from '../step';
import { describeType } from './filter';

/**
 * Map semantics (docs/design.md §2): a missing or wrong-typed field passes unchanged (unless the policy
 * says `error`); a non-finite arithmetic result follows `on_invalid` (default: skip the event).
 */
export function compileMap(operator: MapOperator, label: string): Step {
  const get = compileGetter(operator.field);
  const set = compileSetter(operator.field);
  const [name, operandText] = operator.transform.split(':') as [string, string | undefined];
  const wrongType = (actual: unknown, needs: string) => () =>
    `${label}: field ${operator.field} is ${describeType(actual)}, ${name} needs ${needs}`;

  if (name === 'multiply' || name === 'add') {
    const operand = Number(operandText);
    const apply = name === 'multiply' ? (x: number) => x * operand : (x: number) => x + operand;
    return (item) => {
      const actual = get(item.envelope);
      if (typeof actual !== 'number') {
        return unchangedUnlessError(item, actual, operator, wrongType(actual, 'a number'));
      }
      const result = apply(actual);
      if (!Number.isFinite(result)) {
        return policyVerdict(
          item,
          operator.on_invalid,
          `${label}: ${operator.transform} of ${actual} is not finite`,
        );
      }
      set(item.envelope, result);
      return PASS;
    };
  }

  const apply =
    name === 'uppercase'
      ? (s: string) => s.toUpperCase()
      : name === 'lowercase'
        ? (s: string) => s.toLowerCase()
        : (s: string) => s.trim();
  return (item) => {
    const actual = get(item.envelope);
    if (typeof actual !== 'string') {
      return unchangedUnlessError(item, actual, operator, wrongType(actual, 'a string'));
    }
    set(item.envelope, apply(actual));
    return PASS;
  };
}
