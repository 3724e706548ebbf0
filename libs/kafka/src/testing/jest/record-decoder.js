// Jest's stand-in for kafkajs/src/protocol/recordBatch/record/v0/decoder (see jest.preset.js).
module.exports = require('../../fast-record-decoder').decodeRecord;
