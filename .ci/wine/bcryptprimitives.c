/* ProcessPrng for Wine 8 (Debian bookworm), which lacks bcryptprimitives.dll: Rust's standard
 * library (1.78 and later) takes its random bytes from there on Windows, so no Rust program
 * for x86_64-pc-windows-gnu starts under that Wine without it. Windows 10 and later ship the
 * real DLL; this one is built by .ci/run for the Wine prefix of the unit tests only and answers
 * through BCryptGenRandom, which Wine 8 has. */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0)
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
