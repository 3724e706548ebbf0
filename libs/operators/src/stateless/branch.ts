import type { BranchOperator } from '@sluice/contracts';

import { compileGetter, compileSetter } from '../paths';
import { PASS, unchangedUnlessError } from '../step';
import type { Step } from '../step';
import { describeType } from './filter';

/**
 * Branch (docs/design.md §2): a string field value picks a route name, stored on the result (`route`)
 * and in the payload as `_route`. No match, or a value that is not a string, passes unchanged.
 */
export function compileBranch(operator: BranchOperator, label: string): Step {
  const get = compileGetter(operator.field);
  const setRoute = compileSetter('_route');
  const routes = new Map(Object.entries(operator.branches));
  return (item) => {
    const actual = get(item.envelope);
    if (typeof actual !== 'string') {
      return unchangedUnlessError(
        item,
        actual,
        operator,
        () => `${label}: field ${operator.field} is ${describeType(actual)}, branch needs a string`,
      );
    }
    const route = routes.get(actual);
    if (route !== undefined) {
      item.route = route;
      setRoute(item.envelope, route);
    }
    return PASS;
  };
}
