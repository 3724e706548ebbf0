export {
  ConfigurationError,
  integer,
  listOf,
  loadEnvironment,
  ServiceEnvironment,
  trimmed,
} from './environment';
