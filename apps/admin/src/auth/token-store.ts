import { Inject, Injectable, Logger } from '@nestjs/common';
import type { OnModuleDestroy, OnModuleInit } from '@nestjs/common';

import { ADMIN_CONFIG, loadTokens } from '../config/admin-config';
import type { AdminConfig } from '../config/admin-config';
import { findToken } from './api-tokens';
import type { ApiToken } from './api-tokens';

/**
 * The tokens the API accepts: those loaded at boot, replaced by a SIGHUP's re-read of
 * SLUICE_API_TOKENS_FILE (a rotation without a restart). A re-read that finds a problem keeps
 * the tokens in use and logs every problem: a typo never locks everyone out.
 */
@Injectable()
export class TokenStore implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('TokenStore');
  private tokens: readonly ApiToken[];
  private readonly onHangup = () => void this.reload();

  constructor(@Inject(ADMIN_CONFIG) private readonly config: AdminConfig) {
    this.tokens = config.tokens;
  }

  onModuleInit(): void {
    if (this.config.tokensFile !== undefined) process.on('SIGHUP', this.onHangup);
  }

  onModuleDestroy(): void {
    process.off('SIGHUP', this.onHangup);
  }

  find(presented: string): ApiToken | undefined {
    return findToken(this.tokens, presented);
  }

  /** Re-reads the tokens file; true when its tokens are the ones in use now. */
  reload(): boolean {
    const loaded = loadTokens(this.config.adminToken, this.config.tokensFile);
    if ('problems' in loaded) {
      this.logger.error(
        `the tokens file was not reloaded, the tokens in use stay: ${loaded.problems.join('; ')}`,
      );
      return false;
    }
    this.tokens = loaded.tokens;
    const names = loaded.tokens.map(({ name, role }) => `${name} (${role})`).join(', ');
    this.logger.log(`the tokens file was reloaded: ${names}`);
    return true;
  }
}
