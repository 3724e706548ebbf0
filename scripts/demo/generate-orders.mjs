// Sample orders for the demo: `node generate-orders.mjs <count> <file>` writes <count>
// order.placed events spread over the seven UTC days before today, as JSON lines.
import { createWriteStream } from 'node:fs';

const [count = '50000', file = '/dev/stdout'] = process.argv.slice(2);
const total = Number(count);
const DAY = 86_400_000;
const today = Math.floor(Date.now() / DAY) * DAY;
const first = today - 7 * DAY;
const currencies = ['usd', 'eur', 'gbp'];
const statuses = ['paid', 'paid', 'paid', 'paid', 'pending', 'refunded'];

// A small deterministic generator, so that two demos of the same day show the same numbers.
let seed = 42;
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;

const out = createWriteStream(file);
for (let i = 0; i < total; i += 1) {
  // In time order, as a live shop would produce them.
  const time = first + Math.floor((i / total) * 7 * DAY);
  const event = {
    id: `demo-order-${i + 1}`,
    event_type: 'order.placed',
    entity_id: `order-${i + 1}`,
    timestamp: new Date(time).toISOString(),
    payload: {
      status: statuses[Math.floor(random() * statuses.length)],
      total: Math.round(random() * 20_000) / 100,
      currency: currencies[Math.floor(random() * currencies.length)],
      customer_id: `c-${1 + Math.floor(random() * 500)}`,
    },
    metadata: { source: 'demo' },
  };
  if (!out.write(`${JSON.stringify(event)}\n`)) await new Promise((r) => out.once('drain', r));
}
out.end();
