#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { PromptencError } from '../errors.js';
import { UsageError } from './common.js';
import { encodeCommand, countCommand } from './encode.js';
import { decodeCommand } from './decode.js';
import { chatCommand } from './chat.js';
import { benchCommand } from './bench.js';
import { serveCommand } from './serve.js';
import { parseCommand } from './parse.js';

const program = new Command('promptenc')
  .description('Chat conversations to the exact token ids a model receives')
  .version('0.1.0')
  .showHelpAfterError()
  .exitOverride();

for (const cmd of [encodeCommand(), chatCommand(), decodeCommand(), countCommand(), benchCommand(), serveCommand(), parseCommand()]) {
  program.addCommand(cmd.showHelpAfterError().exitOverride());
}

async function main(argv: string[]): Promise<number> {
  try {
    await program.parseAsync(argv);
    // A command may report a soft failure (bench: engines disagree) through process.exitCode.
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and --version exit through here with code 0.
      return err.exitCode === 0 ? 0 : 2;
    }
    if (err instanceof UsageError) {
      const sub = program.commands.find((c) => c.name() === argv[2]);
      process.stderr.write(`promptenc: ${err.message}\n\n${(sub ?? program).helpInformation()}`);
      return 2;
    }
    if (err instanceof PromptencError) {
      process.stderr.write(`promptenc: ${err.code}: ${err.message.split('\n')[0]}\n`);
      return 1;
    }
    process.stderr.write(`promptenc: internal error: ${(err as Error)?.stack ?? String(err)}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv);
