// A preload for making the llama.cpp goldens on a machine whose CPU reports AMX but where
// llama.cpp's AMX kernels crash (a VM that does not enable the AMX tile state): it refuses the
// AMX permission request (arch_prctl ARCH_REQ_XCOMP_PERM), so ggml does what it does on a CPU
// without AMX (REPACK and its AVX-512 kernels), as when tests/golden/ was made.
//
//   gcc -shared -fPIC -O2 -o /tmp/no_amx.so tests/golden/no_amx.c -ldl
//   LD_PRELOAD=/tmp/no_amx.so .venv-llamacpp/bin/python tests/golden/gen_arch_golden.py
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>

long syscall(long number, ...) {
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (int i = 0; i < 6; ++i) a[i] = va_arg(ap, long);
    va_end(ap);
    if (number == SYS_arch_prctl && a[0] == 0x1023 /* ARCH_REQ_XCOMP_PERM */) {
        errno = EPERM;
        return -1;
    }
    static long (*real)(long, ...) = 0;
    if (!real) real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
