/*
 * bcryptprimitives.dll for Wine 8: Go 1.26 programs call ProcessPrng at
 * start (Windows 10+ has it; Wine 8 does not, and the program dies with
 * "bcryptprimitives.dll not found"). This one export fills the buffer from
 * BCryptGenRandom with the system RNG, as Windows' own does. It is copied
 * only into the Wine prefix the Windows tests use, never shipped.
 */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
		if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0)
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
