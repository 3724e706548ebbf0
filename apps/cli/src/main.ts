// `sluice`: the command line. Every failure ends in reportAndExit: a message, never a stack.
import { reportAndExit } from './errors';
import { buildProgram } from './program';

// `sluice tail … | head` closes the pipe early: that is the reader being done, not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

buildProgram()
  .parseAsync(process.argv)
  .then(() => process.exit(0))
  .catch(reportAndExit);
