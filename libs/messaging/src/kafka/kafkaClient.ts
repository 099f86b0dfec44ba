import { Kafka, logLevel } from 'kafkajs';
import type { Logger } from '@efs/logging';

function kafkaLogLevel(level: string): logLevel {
  return level === 'debug' || level === 'trace' ? logLevel.INFO : logLevel.WARN;
}

/** The kafkajs client of a transport: its timeouts and retries, its logs through the transport's logger. */
export function createKafka(opts: { clientId: string; brokers: string[] }, kafkaLog: Logger): Kafka {
  return new Kafka({
    clientId: opts.clientId,
    brokers: opts.brokers,
    connectionTimeout: 3000,
    requestTimeout: 10_000,
    retry: { initialRetryTime: 200, retries: 8, maxRetryTime: 5000 },
    logLevel: kafkaLogLevel(kafkaLog.level),
    logCreator: () => ({ namespace, level, log }) => {
      const { message, ...extra } = log;
      const fn = level <= logLevel.ERROR ? 'error' : level === logLevel.WARN ? 'warn' : 'debug';
      kafkaLog[fn]({ kafkajs: namespace, ...extra }, message);
    },
  });
}
