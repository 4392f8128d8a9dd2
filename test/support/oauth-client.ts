/**
 * The MCP SDK's OAuth client side, as a connector runs it: an in-memory `OAuthClientProvider`
 * (dynamic registration, PKCE, tokens kept in memory) whose "browser" is the test, signing a
 * person in at the OpenID provider ({@link OidcIssuer.signIn}).
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/** The redirect URI the test connector registers (never served: the test reads the code from it). */
export const CONNECTOR_REDIRECT = 'http://127.0.0.1:1/callback';

export class TestConnectorAuth implements OAuthClientProvider {
  private client: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';
  /** The last authorization URL the SDK sent the "browser" to. */
  authorizationUrl: URL | undefined;

  get redirectUrl(): string {
    return CONNECTOR_REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'erp-proxy tests',
      redirect_uris: [CONNECTOR_REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.client = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
}
