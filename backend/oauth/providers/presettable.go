package providers

// Grant type and method names used in the table.
const (
	grantCode              = "authorization_code"
	grantRefresh           = "refresh_token"
	grantDevice            = "urn:ietf:params:oauth:grant-type:device_code"
	grantClientCredentials = "client_credentials"
	authSecretPost         = "client_secret_post"
	authSecretBasic        = "client_secret_basic"
	pkceS256               = "S256"
)

// presetTable builds the presets afresh on every call, so no caller can
// change what another one sees. The facts are from each provider's public
// documentation; Notes carry what the endpoints alone do not say.
func presetTable() []Preset {
	return []Preset{
		{
			ID:       "github",
			Name:     "GitHub",
			APIHosts: []string{"api.github.com", "uploads.github.com"},
			Metadata: Metadata{
				AuthorizationEndpoint:             "https://github.com/login/oauth/authorize",
				TokenEndpoint:                     "https://github.com/login/oauth/access_token",
				DeviceAuthorizationEndpoint:       "https://github.com/login/device/code",
				ResponseTypesSupported:            []string{"code"},
				GrantTypesSupported:               []string{grantCode, grantRefresh, grantDevice},
				CodeChallengeMethodsSupported:     []string{pkceS256},
				TokenEndpointAuthMethodsSupported: []string{authSecretPost},
			},
			DefaultScopes: []string{"read:user"},
			Notes: "OAuth apps get access tokens that never expire and no refresh token; GitHub Apps with " +
				"expiring user tokens get 8-hour access tokens and a refresh token that rotates on every use. " +
				"There is no RFC 7009 endpoint: revoke with DELETE https://api.github.com/applications/{client_id}/grant " +
				"(basic auth with the client ID and secret, the token in the JSON body); the token endpoint answers " +
				"form-encoded unless sent Accept: application/json, PKCE accepts S256 only, and the device flow " +
				"must be enabled in the app's settings.",
		},
		{
			ID:       "google",
			Name:     "Google",
			APIHosts: []string{"*.googleapis.com"},
			Metadata: Metadata{
				Issuer:                            "https://accounts.google.com",
				AuthorizationEndpoint:             "https://accounts.google.com/o/oauth2/v2/auth",
				TokenEndpoint:                     "https://oauth2.googleapis.com/token",
				RevocationEndpoint:                "https://oauth2.googleapis.com/revoke",
				DeviceAuthorizationEndpoint:       "https://oauth2.googleapis.com/device/code",
				JWKSURI:                           "https://www.googleapis.com/oauth2/v3/certs",
				UserinfoEndpoint:                  "https://openidconnect.googleapis.com/v1/userinfo",
				ResponseTypesSupported:            []string{"code"},
				GrantTypesSupported:               []string{grantCode, grantRefresh, grantDevice},
				CodeChallengeMethodsSupported:     []string{pkceS256},
				TokenEndpointAuthMethodsSupported: []string{authSecretPost, authSecretBasic},
			},
			DefaultScopes: []string{"openid", "email"},
			AuthParams:    map[string]string{"access_type": "offline", "prompt": "consent"},
			Notes: "A refresh token is issued only with access_type=offline, and on a repeat authorization only " +
				"with prompt=consent; it does not rotate, but dies when unused for six months, when the user " +
				"revokes the app, and after 7 days while the consent screen is in Testing. The revocation endpoint " +
				"takes the token as a form parameter (RFC 7009 style, revoking a refresh token also ends its access " +
				"tokens); PKCE is supported and the device flow only allows a short list of scopes.",
			Discovery: "https://accounts.google.com",
		},
		{
			ID:       "gitlab",
			Name:     "GitLab.com",
			APIHosts: []string{"gitlab.com"},
			Metadata: Metadata{
				Issuer:                            "https://gitlab.com",
				AuthorizationEndpoint:             "https://gitlab.com/oauth/authorize",
				TokenEndpoint:                     "https://gitlab.com/oauth/token",
				RevocationEndpoint:                "https://gitlab.com/oauth/revoke",
				IntrospectionEndpoint:             "https://gitlab.com/oauth/introspect",
				DeviceAuthorizationEndpoint:       "https://gitlab.com/oauth/authorize_device",
				JWKSURI:                           "https://gitlab.com/oauth/discovery/keys",
				UserinfoEndpoint:                  "https://gitlab.com/oauth/userinfo",
				ResponseTypesSupported:            []string{"code"},
				GrantTypesSupported:               []string{grantCode, grantRefresh, grantDevice},
				CodeChallengeMethodsSupported:     []string{pkceS256},
				TokenEndpointAuthMethodsSupported: []string{authSecretBasic, authSecretPost},
			},
			DefaultScopes: []string{"read_user"},
			Notes: "Access tokens last two hours and every refresh returns a new refresh token while the old one " +
				"stops working, so the new one must be stored before use. RFC 7009 revocation and RFC 7662 " +
				"introspection are supported, as are PKCE and (GitLab 17.2 and later) the device flow; a " +
				"self-managed instance is discovered from its own URL instead of this preset.",
			Discovery: "https://gitlab.com",
		},
		{
			ID:       "microsoft",
			Name:     "Microsoft Entra ID",
			APIHosts: []string{"graph.microsoft.com"},
			Metadata: Metadata{
				Issuer:                            "https://login.microsoftonline.com/{tenant}/v2.0",
				AuthorizationEndpoint:             "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/authorize",
				TokenEndpoint:                     "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token",
				DeviceAuthorizationEndpoint:       "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/devicecode",
				JWKSURI:                           "https://login.microsoftonline.com/{tenant}/discovery/v2.0/keys",
				UserinfoEndpoint:                  "https://graph.microsoft.com/oidc/userinfo",
				ResponseTypesSupported:            []string{"code"},
				GrantTypesSupported:               []string{grantCode, grantRefresh, grantDevice, grantClientCredentials},
				CodeChallengeMethodsSupported:     []string{pkceS256},
				TokenEndpointAuthMethodsSupported: []string{authSecretPost, authSecretBasic},
			},
			DefaultScopes: []string{"openid", "profile", "User.Read"},
			OfflineScope:  "offline_access",
			Tenant:        true,
			Notes: "A refresh token comes only with offline_access, and each refresh returns a new one that " +
				"replaces it (they expire after 90 days unused, 24 hours for single-page apps). There is no " +
				"revocation endpoint: refresh tokens end when the user's sessions are revoked (Microsoft Graph " +
				"revokeSignInSessions) or the app's consent is removed; PKCE and the device flow are supported.",
			Discovery: "https://login.microsoftonline.com/{tenant}/v2.0",
		},
		{
			ID:       "slack",
			Name:     "Slack",
			APIHosts: []string{"slack.com"},
			Metadata: Metadata{
				AuthorizationEndpoint:             "https://slack.com/oauth/v2/authorize",
				TokenEndpoint:                     "https://slack.com/api/oauth.v2.access",
				ResponseTypesSupported:            []string{"code"},
				GrantTypesSupported:               []string{grantCode, grantRefresh},
				CodeChallengeMethodsSupported:     []string{pkceS256},
				TokenEndpointAuthMethodsSupported: []string{authSecretPost, authSecretBasic},
			},
			Notes: "Refresh tokens exist only when the app turns on token rotation (or uses PKCE): access tokens " +
				"then last 12 hours and each refresh returns a new refresh token; user-token scopes go in the " +
				"user_scope parameter, not scope, and PKCE must be enabled per app. There is no RFC 7009 endpoint: " +
				"a token revokes itself with https://slack.com/api/auth.revoke, and Slack reports errors as " +
				"HTTP 200 with \"ok\": false.",
		},
		{
			ID:       "atlassian",
			Name:     "Atlassian",
			APIHosts: []string{"api.atlassian.com", "*.atlassian.net"},
			Metadata: Metadata{
				AuthorizationEndpoint:             "https://auth.atlassian.com/authorize",
				TokenEndpoint:                     "https://auth.atlassian.com/oauth/token",
				ResponseTypesSupported:            []string{"code"},
				GrantTypesSupported:               []string{grantCode, grantRefresh},
				TokenEndpointAuthMethodsSupported: []string{authSecretPost},
			},
			DefaultScopes: []string{"read:me"},
			OfflineScope:  "offline_access",
			AuthParams:    map[string]string{"audience": "api.atlassian.com", "prompt": "consent"},
			Notes: "A refresh token comes only with offline_access and rotates: each refresh returns a new one " +
				"and disables the one used, and an unused one expires after 90 days. There is no revocation " +
				"endpoint (the user removes the app from their account) and no device flow, and PKCE is not " +
				"documented for these apps, so the client secret is needed.",
		},
	}
}
