// A TV on vivid's emulated CEC bus, for tools/vm/test-cec.sh: finds vivid's adapters, prints the
// HDMI output's ("## cec out /dev/cecN", where the player under test sends from), claims the TV's
// logical address (0) on the HDMI input's, and prints every message it receives ("rx 40:36")
// for SECONDS seconds.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/cec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int seconds = argc > 1 ? atoi(argv[1]) : 30;
    char tv[300] = "", out[300] = "";
    DIR *dev = opendir("/dev");
    struct dirent *e;
    while (dev && (e = readdir(dev))) {
        if (strncmp(e->d_name, "cec", 3) != 0) continue;
        char path[300];
        snprintf(path, sizeof path, "/dev/%s", e->d_name);
        int fd = open(path, O_RDWR);
        struct cec_caps caps = {0};
        if (fd >= 0 && ioctl(fd, CEC_ADAP_G_CAPS, &caps) == 0) {
            printf("## cec adapter %s %s %s\n", path, caps.driver, caps.name);
            if (strstr(caps.name, "vid-cap")) snprintf(tv, sizeof tv, "%s", path);
            if (strstr(caps.name, "vid-out")) snprintf(out, sizeof out, "%s", path);
        }
        if (fd >= 0) close(fd);
    }
    if (dev) closedir(dev);
    if (!*tv || !*out) { printf("## cec no vivid input and output adapters\n"); return 1; }
    int fd = open(tv, O_RDWR);
    struct cec_log_addrs la = {0};
    la.num_log_addrs = 1;
    la.cec_version = CEC_OP_CEC_VERSION_1_4;
    la.vendor_id = CEC_VENDOR_ID_NONE;
    la.primary_device_type[0] = CEC_OP_PRIM_DEVTYPE_TV;
    la.log_addr_type[0] = CEC_LOG_ADDR_TYPE_TV;
    la.all_device_types[0] = CEC_OP_ALL_DEVTYPE_TV;
    strcpy(la.osd_name, "TV");
    if (ioctl(fd, CEC_ADAP_S_LOG_ADDRS, &la)) { printf("## cec tv claim failed: %s\n", strerror(errno)); return 1; }
    __u32 mode = CEC_MODE_INITIATOR | CEC_MODE_FOLLOWER;
    if (ioctl(fd, CEC_S_MODE, &mode)) { printf("## cec tv follower mode failed: %s\n", strerror(errno)); return 1; }
    printf("## cec tv %s logical address %u\n## cec out %s\n", tv, la.log_addr[0], out);
    fflush(stdout);
    time_t end = time(NULL) + seconds;
    while (time(NULL) < end) {
        struct cec_msg m = {0};
        m.timeout = 500;
        if (ioctl(fd, CEC_RECEIVE, &m)) continue;
        printf("rx");
        for (unsigned i = 0; i < m.len; i++) printf("%c%02x", i ? ':' : ' ', m.msg[i]);
        printf("\n");
        fflush(stdout);
    }
    return 0;
}
