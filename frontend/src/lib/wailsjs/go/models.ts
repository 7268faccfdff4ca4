export namespace app {
	
	export interface ActivityFilter {
	    sessionId: string;
	    channel: string;
	    class: string;
	    from: string;
	    to: string;
	    before: number;
	    limit: number;
	}
	export interface ActivityItem {
	    kind: string;
	    index: number;
	    time: string;
	    type: string;
	    sessionId: string;
	    reason: string;
	    vaultEpoch: number;
	    requestId: string;
	    channel: string;
	    operation: string;
	    target: string;
	    state: string;
	    class: string;
	    status: number;
	    bytes: number;
	    durationMs: number;
	    path: string;
	    credentialRef: string;
	    credentialName: string;
	    step: string;
	    outcome: string;
	    code: string;
	    authorizationId: string;
	    drillId: string;
	    drillKind: string;
	    drill: boolean;
	}
	export interface ActivityView {
	    readable: boolean;
	    note: string;
	    items: ActivityItem[];
	    more: boolean;
	    next: number;
	}
	export interface AgentCall {
	    readable: boolean;
	    found: boolean;
	    time: string;
	    channel: string;
	    operation: string;
	    target: string;
	    path: string;
	    status: number;
	    class: string;
	    credential: string;
	    agent: string;
	    pid: number;
	}
	export interface AgentChange {
	    client: string;
	    name: string;
	    path: string;
	    change: string;
	    creates: boolean;
	    entry: string;
	    plan: string;
	}
	export interface AgentClient {
	    id: string;
	    name: string;
	    path: string;
	    state: string;
	    problem: string;
	    lastCall: string;
	    lastProgram: string;
	    lastPid: number;
	}
	export interface ProcessView {
	    name: string;
	    pid: number;
	    startedAt: string;
	    cmdline: string;
	}
	export interface ParentView {
	    name: string;
	    pid: number;
	}
	export interface AgentView {
	    name: string;
	    executable: string;
	    path: string;
	    signer: string;
	    signed: boolean;
	    pid: number;
	    exeHash: string;
	    startedAt: string;
	    parents: ParentView[];
	    via: string;
	    shimPid: number;
	    shimStartedAt: string;
	    shimParent: ProcessView;
	    stdio: string;
	    stdioText: string;
	    stdioOk: boolean;
	}
	export interface AgentWritten {
	    path: string;
	    backup: string;
	    message: string;
	}
	export interface ApprovalCard {
	    id: string;
	    kind: string;
	    agent: AgentView;
	    change: string;
	    headline: string;
	    detail: string;
	    sentence: string;
	    scope: string;
	    channel: string;
	    target: string;
	    method: string;
	    path: string;
	    credential: string;
	    operation: string;
	    description: string;
	    command: string;
	    stdin: string;
	    stdinBytes: number;
	    tool: string;
	    arguments: string;
	    argumentsBytes: number;
	    deadline: string;
	    secondsLeft: number;
	    verifies: boolean;
	    agentStoppedWaiting: boolean;
	    grantWords: string;
	    grantMinutes: number;
	    program: string;
	    reason: string;
	    wants: string;
	}
	export interface AuditStatus {
	    state: string;
	    writing: boolean;
	    problem: string;
	    entries: number;
	    treeHead: string;
	    signedSize: number;
	    firstBad: number;
	    reason: string;
	    torn: string;
	    notes: string[];
	}
	export interface AuthorizationView {
	    id: string;
	    name: string;
	    provider: string;
	    providerHost: string;
	    accountRef: string;
	    scopes: string[];
	    owner: string;
	    backupRevoker: string;
	    environment: string;
	    createdHow: string;
	    connectedAt: string;
	    lastRefresh: string;
	    lastUsed: string;
	    reviewBy: string;
	    disableProcedure: string;
	    operations: string[];
	    state: string;
	    stateReason: string;
	    revocation: string;
	    unattended: boolean;
	    dpop: boolean;
	    clientAuth: string;
	    controlled: boolean;
	    problems: string[];
	    apiHosts: string[];
	    revocationEndpoint: string;
	    introspectionEndpoint: string;
	    waitingRevocations: number;
	}
	export interface BackupChoice {
	    chosen: boolean;
	    path: string;
	    name: string;
	    size: number;
	    modified: string;
	}
	export interface BackupExport {
	    saved: boolean;
	    path: string;
	    size: number;
	}
	export interface BindingOverlap {
	    otherId: string;
	    otherName: string;
	    duplicate: boolean;
	    host: string;
	    path: string;
	    example: string;
	    winner: string;
	    winnerName: string;
	}
	export interface CheckpointExport {
	    saved: boolean;
	    path: string;
	    size: number;
	    treeHead: string;
	}
	export interface ClientKeyView {
	    keyId: string;
	    publicJwk: string;
	    jwks: string;
	}
	export interface ClientSetup {
	    id: string;
	    name: string;
	    agent: string;
	    command: string;
	    config: string;
	    configFile: string;
	}
	export interface ConnectForm {
	    name: string;
	    provider: string;
	    tenant: string;
	    issuer: string;
	    authorizationEndpoint: string;
	    tokenEndpoint: string;
	    revocationEndpoint: string;
	    introspectionEndpoint: string;
	    deviceAuthorizationEndpoint: string;
	    clientId: string;
	    clientAuth: string;
	    clientSecret: string;
	    clientKeyId: string;
	    scopes: string[];
	    environment: string;
	    unattended: boolean;
	    flow: string;
	    owner: string;
	    backupRevoker: string;
	    reviewBy: string;
	    disableProcedure: string;
	    dpop: boolean;
	    apiHosts?: string[];
	}
	export interface ConnectInfo {
	    cliPath: string;
	    cliFound: boolean;
	    listening: boolean;
	    problem: string;
	    user: string;
	    clients: ClientSetup[];
	}
	export interface CredentialEditForm {
	    name: string;
	    format: string;
	    headerName: string;
	    template: string;
	    username: string;
	    hosts: string[];
	    pathPrefixes: string[];
	    approval: string;
	    rotateEveryDays: number;
	}
	export interface CredentialView {
	    id: string;
	    name: string;
	    format: string;
	    headerName: string;
	    template: string;
	    username: string;
	    hosts: string[];
	    pathPrefixes: string[];
	    approval: string;
	    createdAt: string;
	    updatedAt: string;
	    secretSetAt: string;
	    version: number;
	    rotateEveryDays: number;
	    rotationDueAt: string;
	    rotationDue: boolean;
	    overlapsWith: string[];
	}
	export interface DecisionView {
	    id: string;
	    kind: string;
	    agent: AgentView;
	    change: string;
	    channel: string;
	    method: string;
	    target: string;
	    credential: string;
	    outcome: string;
	    why: string;
	    where: string;
	    by: string;
	    at: string;
	    grant: string;
	    grantUntil: string;
	}
	export interface NotificationServerView {
	    current: string;
	    name: string;
	    trusted: boolean;
	    why: string;
	}
	export interface VerificationView {
	    mode: string;
	    why: string;
	    available: boolean;
	    problem: string;
	    editable: boolean;
	}
	export interface SensitiveChoice {
	    ref: string;
	    kind: string;
	    name: string;
	    detail: string;
	}
	export interface NotificationPolicyView {
	    sessionCards: boolean;
	    callCards: boolean;
	    windowOnly: string[];
	}
	export interface NotificationStatusView {
	    available: boolean;
	    actions: boolean;
	    server: string;
	    problem: string;
	}
	export interface DesktopSettings {
	    autostart: boolean;
	    autostartAvailable: boolean;
	    autostartWhere: string;
	    autostartProblem: string;
	    notifications: NotificationStatusView;
	    policy: NotificationPolicyView;
	    sensitive: SensitiveChoice[];
	    verification: VerificationView;
	    notificationServer: NotificationServerView;
	}
	export interface DiscoveryView {
	    issuer: string;
	    authorizationEndpoint: string;
	    tokenEndpoint: string;
	    revocationEndpoint: string;
	    introspectionEndpoint: string;
	    deviceAuthorizationEndpoint: string;
	    scopesSupported: string[];
	    dpop: boolean;
	    authMethods: string[];
	}
	export interface DrillStepView {
	    name: string;
	    title: string;
	    passed: boolean;
	    did: string;
	    evidence: string[];
	    startedAt: string;
	    durationMs: number;
	    auditIndex: number;
	}
	export interface DrillReportView {
	    id: string;
	    authorizationId: string;
	    name: string;
	    provider: string;
	    accountRef: string;
	    kind: string;
	    trigger: string;
	    startedAt: string;
	    finishedAt: string;
	    running: boolean;
	    passed: boolean;
	    steps: DrillStepView[];
	    notExercised: string[];
	    notChecked: string[];
	    endState: string;
	    resumed: boolean;
	    advice: string;
	}
	
	export interface ExportResult {
	    saved: boolean;
	    path: string;
	    size: number;
	}
	export interface FlowView {
	    flowId: string;
	    flow: string;
	    state: string;
	    authorizationUrl: string;
	    userCode: string;
	    verificationUri: string;
	    verificationUriComplete: string;
	    expiresAt: string;
	    authorizationId: string;
	    error: string;
	}
	export interface ImportAdded {
	    index: number;
	    id: string;
	    name: string;
	    note: string;
	}
	export interface NewCredentialForm {
	    name: string;
	    secret: string;
	    format: string;
	    headerName: string;
	    template: string;
	    username: string;
	    hosts: string[];
	    pathPrefixes: string[];
	    approval: string;
	    rotateEveryDays: number;
	    owner: string;
	    backupRevoker: string;
	    environment: string;
	}
	export interface ImportChoice {
	    index: number;
	    form: NewCredentialForm;
	}
	export interface ImportEntry {
	    index: number;
	    name: string;
	    field: string;
	    username: string;
	    host: string;
	    line: number;
	    kind: string;
	    length: number;
	    problem: string;
	    suggestedName: string;
	    duplicate: boolean;
	}
	export interface ImportFailed {
	    index: number;
	    name: string;
	    reason: string;
	}
	export interface ImportPreview {
	    chosen: boolean;
	    id: string;
	    format: string;
	    source: string;
	    expiresAt: string;
	    entries: ImportEntry[];
	    importable: number;
	}
	export interface ImportResult {
	    added: ImportAdded[];
	    failed: ImportFailed[];
	}
	export interface InventoryFilter {
	    text: string;
	    state: string;
	}
	export interface InventoryForm {
	    owner: string;
	    backupRevoker: string;
	    reviewBy: string;
	    disableProcedure: string;
	}
	export interface InventoryRowView {
	    id: string;
	    kind: string;
	    name: string;
	    provider: string;
	    accountRef: string;
	    scopes: string[];
	    environment: string;
	    heldOn: string;
	    owner: string;
	    backupRevoker: string;
	    createdVia: string;
	    connectedAt: string;
	    lastUsed: string;
	    lastRefresh: string;
	    reviewBy: string;
	    lastDrillId: string;
	    lastDrillKind: string;
	    lastDrillAt: string;
	    lastDrillPassed: boolean;
	    nextDrill: string;
	    drillEveryDays: number;
	    drillKind: string;
	    drillable: boolean;
	    operations: string[];
	    disableProcedure: string;
	    state: string;
	    stateReason: string;
	    controlled: boolean;
	    missing: string[];
	    reviewDue: boolean;
	    drillOverdue: boolean;
	    drilling: boolean;
	}
	export interface InventorySettingsView {
	    blockUncontrolled: boolean;
	}
	export interface LiveGrant {
	    id: string;
	    sessionId: string;
	    agent: AgentView;
	    words: string;
	    credential: string;
	    givenAt: string;
	    until: string;
	    uses: number;
	}
	export interface LiveSession {
	    id: string;
	    agent: AgentView;
	    channel: string;
	    approvedAt: string;
	    surface: string;
	    vaultEpoch: number;
	}
	export interface LoggedSession {
	    id: string;
	    executable: string;
	    pid: number;
	    exeSha256: string;
	    signer: string;
	    bootId: string;
	    vaultEpoch: number;
	    approvedAt: string;
	    approvedBy: string;
	    surface: string;
	    ended: boolean;
	    endedAt: string;
	    endReason: string;
	    endInferred: boolean;
	    calls: number;
	}
	export interface MCPConnectView {
	    flow: FlowView;
	    server: string;
	    issuer: string;
	    resource: string;
	    scopes: string[];
	    registered: boolean;
	}
	export interface MCPField {
	    name: string;
	    value: string;
	}
	export interface MCPToolMode {
	    tool: string;
	    approval: string;
	}
	export interface MCPSettingsForm {
	    approval: string;
	    tools: MCPToolMode[];
	    owner: string;
	    backupRevoker: string;
	}
	export interface MCPServerForm {
	    name: string;
	    transport: string;
	    command: string;
	    args: string[];
	    env: MCPField[];
	    url: string;
	    secrets: MCPField[];
	    oauth: boolean;
	    clientId: string;
	    clientSecret: string;
	    environment: string;
	    settings: MCPSettingsForm;
	}
	export interface MCPToolView {
	    name: string;
	    readOnlyHint: boolean;
	    approval: string;
	    asksEachCall: boolean;
	}
	export interface MCPServerView {
	    id: string;
	    name: string;
	    transport: string;
	    command: string;
	    args: string[];
	    url: string;
	    secretNames: string[];
	    authorizationId: string;
	    authorizationName: string;
	    settings: MCPSettingsForm;
	    state: string;
	    problem: string;
	    tools: MCPToolView[];
	    hidden: string[];
	    controlled: boolean;
	    problems: string[];
	    createdAt: string;
	    version: number;
	}
	
	
	
	
	
	
	
	export interface ParamView {
	    name: string;
	    type: string;
	    allowed: string[];
	    pattern: string;
	    required: boolean;
	}
	export interface OperationView {
	    name: string;
	    authorizationId: string;
	    description: string;
	    method: string;
	    urlTemplate: string;
	    params: ParamView[];
	    bodySchema: string;
	    approval: string;
	    readOnly: boolean;
	}
	export interface PageRequest {
	    before: number;
	    limit: number;
	}
	
	
	export interface VaultStatus {
	    state: string;
	    epoch: number;
	    keyringEnabled: boolean;
	    keyringAvailable: boolean;
	    keyringNote: string;
	    autoLockMinutes: number;
	    lockDeadline: string;
	    damaged: string;
	    retryAfterMs: number;
	    kdf: string;
	    rotationsDue: number;
	    lastBackupAt: string;
	    lastBackupPath: string;
	    backupReminderDays: number;
	    backupDue: boolean;
	}
	export interface PassphraseChangeView {
	    keyringRewrapped: boolean;
	    keyringCleared: boolean;
	    status: VaultStatus;
	}
	export interface PresetView {
	    id: string;
	    name: string;
	    defaultScopes: string[];
	    tenant: boolean;
	    notes: string;
	    hasDevice: boolean;
	    hasRevocation: boolean;
	    apiHosts: string[];
	}
	
	export interface RemovedCredentialView {
	    id: string;
	    name: string;
	    undoUntil: string;
	}
	export interface RevokeStepView {
	    step: string;
	    ok: boolean;
	    detail: string;
	    at: string;
	    unverified: boolean;
	}
	export interface RevokeReport {
	    authorizationId: string;
	    steps: RevokeStepView[];
	    retryPending: boolean;
	}
	
	export interface RunAnswerFail {
	    id: string;
	    error: string;
	}
	export interface RunsAnswered {
	    answered: string[];
	    failed: RunAnswerFail[];
	}
	export interface SSHSettingsForm {
	    approval: string;
	    rules: string;
	    timeoutSeconds: number;
	    record: boolean;
	    owner: string;
	    backupRevoker: string;
	}
	export interface SSHHostForm {
	    name: string;
	    address: string;
	    port: number;
	    user: string;
	    privateKey: string;
	    passphrase: string;
	    settings: SSHSettingsForm;
	    environment: string;
	}
	export interface SSHPinView {
	    type: string;
	    fingerprint: string;
	}
	export interface SSHHostView {
	    id: string;
	    name: string;
	    address: string;
	    port: number;
	    user: string;
	    publicKey: string;
	    keyFingerprint: string;
	    pins: SSHPinView[];
	    alertFingerprint: string;
	    alertAt: string;
	    settings: SSHSettingsForm;
	    controlled: boolean;
	    problems: string[];
	    createdAt: string;
	    version: number;
	}
	export interface SSHPinResult {
	    host: SSHHostView;
	    skipped: number;
	}
	
	export interface SSHRecordingText {
	    id: string;
	    hostId: string;
	    started: string;
	    bytes: number;
	    cast: string;
	    complete: boolean;
	}
	export interface SSHRecordingView {
	    id: string;
	    hostId: string;
	    started: string;
	    bytes: number;
	}
	
	
	export interface SessionsView {
	    readable: boolean;
	    note: string;
	    sessions: LoggedSession[];
	    more: boolean;
	    next: number;
	}
	export interface SettingsView {
	    blockUncontrolled: boolean;
	}
	export interface TeamCheckpointView {
	    machine: string;
	    hostname: string;
	    size: number;
	    published: string;
	    verified: boolean;
	    cosignedSize: number;
	    witness: string;
	    witnessed: boolean;
	    refused: boolean;
	    refusal: string;
	    refusedAt: string;
	    words: string;
	}
	export interface TeamFilter {
	    text: string;
	    state: string;
	    machine: string;
	}
	export interface TeamMachineView {
	    id: string;
	    hostname: string;
	    member: string;
	    kind: string;
	    lastSeen: string;
	    removed: string;
	    clock: string;
	    rows: number;
	    fingerprint: string;
	}
	export interface TeamRequestView {
	    id: string;
	    hostname: string;
	    member: string;
	    rowId: string;
	    rowName: string;
	    reason: string;
	    requestedBy: string;
	    requestedAt: string;
	    status: string;
	    outcome: string;
	    answeredAt: string;
	    verified: boolean;
	    waiting: string;
	}
	export interface TeamRowView {
	    machine: string;
	    hostname: string;
	    member: string;
	    removed: boolean;
	    verified: boolean;
	    updated: string;
	    row: InventoryRowView;
	}
	export interface TeamRowsPage {
	    rows: TeamRowView[];
	    next: string;
	}
	export interface TeamStatusView {
	    inTeam: boolean;
	    teamName: string;
	    role: string;
	    machine: string;
	    member: string;
	    sharing: boolean;
	    connected: boolean;
	    lastSynced: string;
	    waiting: number;
	    problem: string;
	}
	

}

