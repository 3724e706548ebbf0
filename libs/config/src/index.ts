export {
  ConfigurationError,
  integer,
  listOf,
  loadEnvironment,
  ServiceEnvironment,
  trimmed,
} from './environment';
export { environmentVariableNames } from './variables';
export { bearerMatches, bearerToken, tokenDigest } from './bearer-token';
