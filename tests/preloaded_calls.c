/* C library calls answered as a failing or power-cut machine would, for servers
   run with LD_PRELOAD by the tests (built by tests/preloaded.py).

   Failures on demand (each while the file its environment variable names exists):
   the server's fdatasync ($FSYNC_FAILS_WHILE), fsync and fdatasync in a forked
   child ($CHILD_FSYNC_FAILS_WHILE), fork ($FORK_FAILS_WHILE).

   Power cuts ($DURABLE_DATA: the data directory, $DURABLE_IMAGE: a directory
   beside it): the library keeps a "durable image" of what a power cut would leave
   of the data directory. A file's content gets there only when the file is
   fsynced (fsync or fdatasync), and only the bytes it held when the call began
   (what is written during the call may or may not reach the disk: not counted);
   a directory's entries (name -> file) only when the directory is, as they were
   when the call began; sync and syncfs take the whole tree. Files and directories are
   keyed by inode and birth time (an inode number is reused after a delete).
       $DURABLE_IMAGE/root           the data directory's key
       $DURABLE_IMAGE/files/<key>    a file's content at its last fsync
       $DURABLE_IMAGE/dirs/<key>     a directory's entries at its last fsync,
                                     one "<f|d> <key> <name>" line each
       $DURABLE_IMAGE/files/<key>.began   when the sync call recorded there began
       $DURABLE_IMAGE/dirs/<key>.began    (of two calls on one file running at once,
                                          the one that began later decides, whichever
                                          returns last: its content is the newer)
   $DURABLE_SYNC_LOG (if set), a file outside the image, gets a line per sync call
   on a file or directory of the data directory, so that tests can time the code
   under test by its own syncs (CLOCK_MONOTONIC ns, as Python's time.monotonic):
       B <began> <pid> <tid> <path>          the call begins (tid: the thread)
       E <began> <ended> <pid> <tid> <path>  it returns, in the image (written under
                                             the image's lock: never after a cut)
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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
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

/* Whether fd is the data directory or lies inside it; its path goes to `path`. */
static int in_data_dir(int fd, char *path) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, PATH_MAX - 1);
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

/* files/<key> := the first `limit` bytes of file fd (all of it when limit < 0).
   Only what grew since the last record is copied when the recorded bytes still
   begin and end as the file does (the AOF only grows; a file rewritten in place is
   copied whole). */
static void record_file(int fd, const char *key, off_t limit) {
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
    if (limit >= 0 && limit < s.st_size)
        s.st_size = limit;
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

/* The entries of directory fd, one line each, into the file `path`; with `deep`,
   also each entry's own content (files) or entries (directories) into the image. */
static void write_listing(int fd, const char *path, int deep) {
    FILE *out = fopen(path, "w");
    int lister = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = lister < 0 ? NULL : fdopendir(lister);
    if (out == NULL || dir == NULL) {
        perror("durable image: write_listing");
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
                if (is_dir) {
                    char sub_path[PATH_MAX];
                    image_path(sub_path, "dirs", child);
                    write_listing(sub, sub_path, 1);
                } else {
                    record_file(sub, child, -1);
                }
                close(sub);
            }
        }
    }
    closedir(dir);
    if (fclose(out) != 0) {
        perror("durable image: write_listing");
        abort();
    }
}

/* A temporary listing's path, this thread's own: dirs/<key>.<pid>.<tid>. */
static void listing_temp(char *out, const char *key) {
    char path[PATH_MAX];
    image_path(path, "dirs", key);
    snprintf(out, PATH_MAX + 48, "%s.%d.%d", path, getpid(), gettid());
}

/* dirs/<key> := the listing in `temp` (taken with write_listing). */
static void install_listing(const char *temp, const char *key) {
    char path[PATH_MAX];
    image_path(path, "dirs", key);
    if (rename(temp, path) != 0) {
        perror("durable image: install_listing");
        abort();
    }
}

/* Held by the thread holding the image's lock, and by fork: a child forked while
   another thread held the lock would inherit its open file, so the lock would
   stay held in the child's name, and the child's own next record would wait for
   it forever (and with it the parent's, and the test's cut). */
static pthread_mutex_t image_mutex = PTHREAD_MUTEX_INITIALIZER;

/* Takes the image's lock; after the power cut, never returns. */
static int lock_image(void) {
    pthread_mutex_lock(&image_mutex);
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

static void unlock_image(int fd) {
    close(fd);
    pthread_mutex_unlock(&image_mutex);
}

/* A sync call on a file or directory of the data directory, from its beginning
   to its end: what it may make durable is taken when it begins. */
struct sync_call {
    int active;                      /* fd belongs to the data directory */
    int is_dir;
    char key[96];
    char path[PATH_MAX];             /* fd's path */
    char listing[PATH_MAX + 48];     /* a directory's entries when the call began */
    off_t size;                      /* a file's size when the call began */
    long long began;
};

static long long monotonic_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* A line in $DURABLE_SYNC_LOG, in one write(2) so that concurrent lines never mix;
   `ended` 0: the call begins. */
static void log_sync(const struct sync_call *c, long long ended) {
    const char *log = getenv("DURABLE_SYNC_LOG");
    if (log == NULL)
        return;
    char line[PATH_MAX + 96];
    int n = ended ? snprintf(line, sizeof line, "E %lld %lld %d %d %s\n", c->began, ended,
                             getpid(), gettid(), c->path)
                  : snprintf(line, sizeof line, "B %lld %d %d %s\n", c->began, getpid(),
                             gettid(), c->path);
    int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || n >= (int)sizeof line || write(fd, line, n) != n) {
        perror("durable image: sync log");
        abort();
    }
    close(fd);
}

static void sync_begins(int fd, struct sync_call *c) {
    c->active = 0;
    if (!data_dir[0] || !in_data_dir(fd, c->path)
        || key_of(fd, NULL, c->key, sizeof c->key, &c->is_dir) != 0)
        return;
    c->active = 1;
    if (c->is_dir) {
        listing_temp(c->listing, c->key);
        write_listing(fd, c->listing, 0);
    } else {
        struct stat st;
        if (fstat(fd, &st) != 0) {
            perror("durable image: fstat");
            abort();
        }
        c->size = st.st_size;
    }
    c->began = monotonic_ns();
    log_sync(c, 0);
}

/* When the sync call that recorded kind/key began (-1: none did); `set` >= 0 sets it. */
static long long recorded_began(const char *kind, const char *key, long long set) {
    char path[PATH_MAX], name[128];
    snprintf(name, sizeof name, "%s.began", key);
    image_path(path, kind, name);
    long long began = -1;
    if (set >= 0) {
        FILE *out = fopen(path, "w");
        if (out == NULL || fprintf(out, "%lld\n", set) < 0 || fclose(out) != 0) {
            perror("durable image: began");
            abort();
        }
        return set;
    }
    FILE *in = fopen(path, "r");
    if (in != NULL) {
        if (fscanf(in, "%lld", &began) != 1)
            began = -1;
        fclose(in);
    }
    return began;
}

/* The call returned (ok: it succeeded): what it began with becomes durable, unless
   a call on the same file that began later was recorded already. */
static void sync_ends(int fd, const struct sync_call *c, int ok) {
    if (!c->active)
        return;
    if (!ok) {
        if (c->is_dir)
            unlink(c->listing);
        return;
    }
    int lock = lock_image();
    const char *kind = c->is_dir ? "dirs" : "files";
    if (recorded_began(kind, c->key, -1) > c->began) {
        if (c->is_dir)
            unlink(c->listing);
    } else {
        if (c->is_dir)
            install_listing(c->listing, c->key);
        else
            record_file(fd, c->key, c->size);
        recorded_began(kind, c->key, c->began);
    }
    log_sync(c, monotonic_ns());                  /* the call returns now */
    unlock_image(lock);
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
    char listing[PATH_MAX + 48];
    listing_temp(listing, key);
    write_listing(fd, listing, 1);
    install_listing(listing, key);
    close(fd);
    snprintf(path, sizeof path, "%s/root", image_dir);
    FILE *root = fopen(path, "w");
    if (root == NULL || fprintf(root, "%s\n", key) < 0 || fclose(root) != 0)
        abort();
    unlock_image(lock);
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
    struct sync_call call;
    sync_begins(fd, &call);
    int result = real(fd);
    int saved = errno;
    sync_ends(fd, &call, result == 0);
    errno = saved;
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
    pthread_mutex_lock(&image_mutex);
    pid_t pid = real();
    pthread_mutex_unlock(&image_mutex);           /* in the parent and in the child */
    return pid;
}
