// An LD_PRELOAD library that gives a program adapter hci0 without Bluetooth in the kernel: libbluetooth's
// hci_devid/hci_open_dev/hci_devinfo answer for hci0 with a SOCK_SEQPACKET connection to the Unix socket named by
// BEACONMESH_FAKE_HCI (a fake controller: one H4 packet per message, as a raw HCI socket carries them), and
// setsockopt(SOL_HCI, HCI_FILTER) on that connection is accepted (the fake sends only what the filter would pass).
// `beacon-bench scanner-live-process` compiles it (FakeAdapter.swift): clang -shared -fPIC -O2 … -ldl.
#define _GNU_SOURCE
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int fake_descriptors[8] = {-1, -1, -1, -1, -1, -1, -1, -1};

static int is_fake(int fd) {
    for (int i = 0; i < 8; i++) if (fake_descriptors[i] == fd) return 1;
    return 0;
}

int hci_devid(const char *name) {
    if (name && strcmp(name, "hci0") == 0) return 0;
    errno = ENODEV;
    return -1;
}

int hci_open_dev(int dev_id) {
    const char *path = getenv("BEACONMESH_FAKE_HCI");
    if (dev_id != 0 || !path) { errno = ENODEV; return -1; }
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, path, sizeof(address.sun_path) - 1);
    if (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) { int saved = errno; close(fd); errno = saved; return -1; }
    for (int i = 0; i < 8; i++) if (fake_descriptors[i] < 0) { fake_descriptors[i] = fd; break; }
    return fd;
}

int hci_devinfo(int dev_id, struct hci_dev_info *info) {
    if (dev_id != 0) { errno = ENODEV; return -1; }
    memset(info, 0, sizeof(*info));
    info->dev_id = 0;
    strcpy(info->name, "hci0");
    info->flags = 1u << HCI_UP;
    return 0;
}

int setsockopt(int fd, int level, int name, const void *value, socklen_t length) {
    static int (*real)(int, int, int, const void *, socklen_t);
    if (level == SOL_HCI && name == HCI_FILTER && is_fake(fd)) return 0;
    if (!real) real = dlsym(RTLD_NEXT, "setsockopt");
    return real(fd, level, name, value, length);
}

int close(int fd) {
    static int (*real)(int);
    for (int i = 0; i < 8; i++) if (fake_descriptors[i] == fd) fake_descriptors[i] = -1;
    if (!real) real = dlsym(RTLD_NEXT, "close");
    return real(fd);
}
