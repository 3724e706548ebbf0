// Jest's stand-in for kafkajs/src/consumer/filterAbortedMessages (see jest.preset.js).
module.exports = require('../../read-committed-fix').filterAbortedMessages;
