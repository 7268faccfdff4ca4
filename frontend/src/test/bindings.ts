// The fakes of the bound Go services implement what Wails generates for
// them (src/lib/wailsjs, checked against the Go side by make test): a
// method renamed, removed or given other parameters in Go breaks the fake
// at type-check time. A fake may answer with anything (the parsers are
// what is under test), so only the parameters are pinned.
import type * as ApprovalService from '../lib/wailsjs/go/app/ApprovalService';
import type * as AuditService from '../lib/wailsjs/go/app/AuditService';
import type * as ConnectService from '../lib/wailsjs/go/app/ConnectService';
import type * as DesktopService from '../lib/wailsjs/go/app/DesktopService';
import type * as InventoryService from '../lib/wailsjs/go/app/InventoryService';
import type * as MCPService from '../lib/wailsjs/go/app/MCPService';
import type * as OAuthService from '../lib/wailsjs/go/app/OAuthService';
import type * as SSHService from '../lib/wailsjs/go/app/SSHService';
import type * as TeamService from '../lib/wailsjs/go/app/TeamService';
import type * as VaultService from '../lib/wailsjs/go/app/VaultService';

// A fake's parameter may be the window's narrower type (a union where Go
// has a string): parameters are compared both ways, as methods are, so the
// names, the count and the kinds of the parameters are what is pinned.
type Bivariant<A extends unknown[]> = { method(...args: A): Promise<unknown> }['method'];
type Fake<T> = {
  [K in keyof T]?: T[K] extends (...args: infer A) => Promise<unknown> ? Bivariant<A> : never;
};

export type FakeVaultService = Fake<typeof VaultService>;
export type FakeConnectService = Fake<typeof ConnectService>;
export type FakeApprovalService = Fake<typeof ApprovalService>;
export type FakeAuditService = Fake<typeof AuditService>;
export type FakeDesktopService = Fake<typeof DesktopService>;
export type FakeInventoryService = Fake<typeof InventoryService>;
export type FakeOAuthService = Fake<typeof OAuthService>;
export type FakeSSHService = Fake<typeof SSHService>;
export type FakeMCPService = Fake<typeof MCPService>;
export type FakeTeamService = Fake<typeof TeamService>;
