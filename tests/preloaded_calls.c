/* C library calls answered as a failing or power-cut machine would, for servers
   run with LD_PRELOAD by the tests (built by tests/preloaded.py).

   Failures on demand (each while the file its environment variable names exists):
   the server's fdatasync ($FSYNC_FAILS_WHILE), fsync and fdatasync in a forked
   child ($CHILD_FSYNC_FAILS_WHILE), fork ($FORK_FAILS_WHILE).

   Power cuts ($DURABLE_DATA: the data directory, $DURABLE_IMAGE: a directory
   beside it): the library keeps a "durable image" of what a power cut would leave
   of the data directory. A file's content gets there only when the file is
   fsynced (fsync or fdatasync), a directory's entries (name -> file) only when the
   directory is; sync and syncfs take the whole tree. Files and directories are
   keyed by inode and birth time (an inode number is reused after a delete).
       $DURABLE_IMAGE/root           the data directory's key
       $DURABLE_IMAGE/files/<key>    a file's content at its last fsync
       $DURABLE_IMAGE/dirs/<key>     a directory's entries at its last fsync,
                                     one "<f|d> <key> <name>" line each
   Whatever exists when the first process loads the library counts as durable.
   The test cuts the power by taking $DURABLE_IMAGE/lock (every record holds it,
   in every process: the server, its threads, its forked children) and creating
   $DURABLE_IMAGE/cut: from then on a sync call never returns, as on a machine
   without power, until the test's kill -9. tests/preloaded.py rebuilds the
   directory from the image. The code under test syncs only with fsync and
   fdatasync (no O_SYNC opens, no sync_file_range, which is no durability
   promise on Linux and passes through here). */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* True while the file named by the environment variable `name` exists. */
static int failing(const char *name) {
    const char *flag = getenv(name);
    return flag != NULL && access(flag, F_OK) == 0;
}

/* The process the library was loaded into: a forked child has another pid. */
static pid_t server_pid;

/* Whether an fsync or fdatasync call fails: the server's fdatasync while
   $FSYNC_FAILS_WHILE exists, either call in a forked child (the one writing a new
   AOF base) while $CHILD_FSYNC_FAILS_WHILE exists. */
static int sync_fails(int data_only) {
    if (getpid() != server_pid)
        return failing("CHILD_FSYNC_FAILS_WHILE");
    return data_only && failing("FSYNC_FAILS_WHILE");
}

/* -- the durable image ------------------------------------------------------------ */

static char data_dir[PATH_MAX];          /* realpath of $DURABLE_DATA; "" when off */
static const char *image_dir;

/* "<inode>-<birth time in ns>" of the file fd (name NULL) or of name in dir fd. */
static int key_of(int fd, const char *name, char *key, size_t size, int *is_dir) {
    struct statx st;
    if (statx(fd, name ? name : "", name ? AT_SYMLINK_NOFOLLOW : AT_EMPTY_PATH,
              STATX_INO | STATX_TYPE | STATX_BTIME, &st) != 0)
        return -1;
    if (is_dir)
        *is_dir = S_ISDIR(st.stx_mode);
    if (!S_ISDIR(st.stx_mode) && !S_ISREG(st.stx_mode))
        return -1;
    snprintf(key, size, "%llu-%lld%09u", (unsigned long long)st.stx_ino,
             (long long)st.stx_btime.tv_sec, st.stx_btime.tv_nsec);
    return 0;
}

/* Whether fd is the data directory or lies inside it. */
static int in_data_dir(int fd) {
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n < 0)
        return 0;
    path[n] = '\0';
    size_t len = strlen(data_dir);
    return strncmp(path, data_dir, len) == 0 && (path[len] == '\0' || path[len] == '/');
}

static void image_path(char *out, const char *kind, const char *key) {
    snprintf(out, PATH_MAX, "%s/%s/%s", image_dir, kind, key);
}

static int same_bytes(int a, int b, off_t at, size_t n) {
    char x[4096], y[4096];
    return pread(a, x, n, at) == (ssize_t)n && pread(b, y, n, at) == (ssize_t)n
           && memcmp(x, y, n) == 0;
}

/* files/<key> := the content of file fd. Only what grew since the last record is
   copied when the recorded bytes still begin and end as the file does (the AOF
   only grows; a file rewritten in place is copied whole). */
static void record_file(int fd, const char *key) {
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    int src = open(link, O_RDONLY | O_CLOEXEC);      /* fd may be write-only */
    image_path(path, "files", key);
    int dst = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    struct stat s, d;
    if (src < 0 || dst < 0 || fstat(src, &s) != 0 || fstat(dst, &d) != 0) {
        perror("durable image: record_file");
        abort();
    }
    off_t from = 0;
    size_t edge = d.st_size < 4096 ? (size_t)d.st_size : 4096;
    if (d.st_size > 0 && s.st_size >= d.st_size && same_bytes(src, dst, 0, edge)
        && same_bytes(src, dst, d.st_size - edge, edge))
        from = d.st_size;
    char buf[1 << 16];
    while (from < s.st_size) {
        ssize_t n = pread(src, buf, sizeof buf, from);
        if (n <= 0)
            break;                                   /* cut short meanwhile */
        if (pwrite(dst, buf, n, from) != n) {
            perror("durable image: write");
            abort();
        }
        from += n;
    }
    if (ftruncate(dst, from) != 0)
        abort();
    close(src);
    close(dst);
}

/* dirs/<key> := the entries of directory fd; with `deep`, also each entry's own
   content (files) or entries (directories). */
static void record_dir(int fd, const char *key, int deep) {
    char path[PATH_MAX], tmp[PATH_MAX + 16];
    image_path(path, "dirs", key);
    snprintf(tmp, sizeof tmp, "%s.%d", path, getpid());
    FILE *out = fopen(tmp, "w");
    int lister = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = lister < 0 ? NULL : fdopendir(lister);
    if (out == NULL || dir == NULL) {
        perror("durable image: record_dir");
        abort();
    }
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        char child[96];
        int is_dir;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")
            || key_of(fd, e->d_name, child, sizeof child, &is_dir) != 0)
            continue;
        fprintf(out, "%c %s %s\n", is_dir ? 'd' : 'f', child, e->d_name);
        if (deep) {
            int sub = openat(fd, e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
            if (sub >= 0) {
                if (is_dir)
                    record_dir(sub, child, 1);
                else
                    record_file(sub, child);
                close(sub);
            }
        }
    }
    closedir(dir);
    if (fclose(out) != 0 || rename(tmp, path) != 0) {
        perror("durable image: record_dir");
        abort();
    }
}

/* Takes the image's lock; after the power cut, never returns. */
static int lock_image(void) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/lock", image_dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        perror("durable image: lock");
        abort();
    }
    snprintf(path, sizeof path, "%s/cut", image_dir);
    if (access(path, F_OK) == 0) {
        close(fd);
        for (;;)
            pause();
    }
    return fd;
}

/* Makes what fd holds durable in the image, if it belongs to the data directory. */
static void record(int fd) {
    char key[96];
    int is_dir;
    if (!data_dir[0] || !in_data_dir(fd) || key_of(fd, NULL, key, sizeof key, &is_dir) != 0)
        return;
    int lock = lock_image();
    if (is_dir)
        record_dir(fd, key, 0);
    else
        record_file(fd, key);
    close(lock);
}

/* The whole data directory becomes durable (start, sync, syncfs). */
static void record_tree(void) {
    char key[96], path[PATH_MAX];
    int lock = lock_image();
    int fd = open(data_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || key_of(fd, NULL, key, sizeof key, NULL) != 0) {
        perror("durable image: data directory");
        abort();
    }
    record_dir(fd, key, 1);
    close(fd);
    snprintf(path, sizeof path, "%s/root", image_dir);
    FILE *root = fopen(path, "w");
    if (root == NULL || fprintf(root, "%s\n", key) < 0 || fclose(root) != 0)
        abort();
    close(lock);
}

__attribute__((constructor)) static void start(void) {
    server_pid = getpid();
    const char *data = getenv("DURABLE_DATA");
    image_dir = getenv("DURABLE_IMAGE");
    if (data == NULL || image_dir == NULL)
        return;
    if (realpath(data, data_dir) == NULL) {
        perror("durable image: $DURABLE_DATA");
        abort();
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/root", image_dir);
    if (access(path, F_OK) == 0)
        return;                      /* a process started later: the image exists */
    snprintf(path, sizeof path, "%s/files", image_dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/dirs", image_dir);
    mkdir(path, 0755);
    record_tree();
}

/* -- the intercepted calls -------------------------------------------------------- */

/* The C library's `name` (fsync or fdatasync) on fd, unless it is to fail; what
   it made durable goes to the image. */
static int sync_call(const char *name, int fd, int data_only) {
    if (sync_fails(data_only)) {
        errno = EIO;
        return -1;
    }
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, name);
    int result = real(fd);
    if (result == 0)
        record(fd);
    return result;
}

int fdatasync(int fd) { return sync_call("fdatasync", fd, 1); }
int fsync(int fd) { return sync_call("fsync", fd, 0); }

void sync(void) {
    void (*real)(void) = (void (*)(void))dlsym(RTLD_NEXT, "sync");
    real();
    if (data_dir[0])
        record_tree();
}

int syncfs(int fd) {
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "syncfs");
    int result = real(fd);
    if (result == 0 && data_dir[0])
        record_tree();
    return result;
}

pid_t fork(void) {
    if (failing("FORK_FAILS_WHILE")) {
        errno = EAGAIN;
        return -1;
    }
    pid_t (*real)(void) = (pid_t (*)(void))dlsym(RTLD_NEXT, "fork");
    return real();
}
