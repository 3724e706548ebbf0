import { offsetsPartitionOf } from './open-transactions';

describe('offsetsPartitionOf', () => {
  it("places a group where the broker does (values from Java's String.hashCode)", () => {
    // java: Utils.abs("sluice-processor".hashCode()) % 50 and so on, hashes -1295517676,
    // 1301979083, 98768023 and Integer.MIN_VALUE.
    expect(offsetsPartitionOf('sluice-processor', 50)).toBe(26);
    expect(offsetsPartitionOf('bench-e99bba7c-many.processor', 50)).toBe(33);
    expect(offsetsPartitionOf('grüße', 50)).toBe(23);
    expect(offsetsPartitionOf('polygenelubricants', 50)).toBe(0);
    expect(offsetsPartitionOf('', 50)).toBe(0);
  });
});
