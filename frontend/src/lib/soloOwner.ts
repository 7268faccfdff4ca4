// "I own this and revoke it myself" on the forms that ask who answers for
// something (an account, an MCP server): owner and backup revoker are both
// this computer's user, and the inventory then says nobody else is named.
import { connectInfo } from './backend';

/** This computer's user, as the backend names it ("" until known). */
export function thisUser(set: (user: string) => void): void {
  connectInfo().then(
    (i) => set(i.user),
    () => {},
  );
}

/** The owner and backup revoker once the box is ticked or unticked. */
export function soloOwners(alone: boolean, owner: string, backupRevoker: string, me: string): { owner: string; backupRevoker: string } {
  if (alone) {
    const who = owner.trim() || me || 'me';
    return { owner: who, backupRevoker: who };
  }
  return { owner, backupRevoker: backupRevoker === owner ? '' : backupRevoker };
}
