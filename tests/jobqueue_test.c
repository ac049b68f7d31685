/* cuda/jobqueue.c: every job of every group runs exactly once, on a valid
 * worker index, before qm_jobq_wait() returns; groups posted from another
 * thread than the waiting one, slots in flight as the engine has them; a
 * group never posted times out; a queue without threads runs the jobs in
 * the waiting thread; stop() with jobs still queued returns; the done
 * callback comes once a posting, after all of the group's jobs ran, and
 * never from a queue without threads.  No GPU. */
#include "jobqueue.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GROUPS 6
#define JOBS 4
#define ROUNDS 3000

static atomic_int runs[GROUPS][JOBS];
static atomic_int bad_worker;
static atomic_int done_calls, done_early;
static unsigned n_threads;
static int failures;

#define CHECK(c, ...)                                                      \
    do {                                                                   \
        if (!(c) && failures++ < 20) {                                     \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                                  \
            fprintf(stderr, "\n");                                         \
        }                                                                  \
    } while (0)

static void job(void *arg, unsigned group, unsigned j, unsigned worker)
{
    (void)arg;
    if (worker >= (n_threads ? n_threads : 1))
        atomic_fetch_add(&bad_worker, 1);
    /* a little work, unevenly, so that jobs finish out of order */
    if ((group + j) % 3 == 0)
        usleep(20);
    atomic_fetch_add(&runs[group][j], 1);
}

static void group_done(void *arg, unsigned group)
{
    (void)arg;
    const int r = atomic_load(&runs[group][0]);
    for (int j = 1; j < JOBS; j++)
        if (atomic_load(&runs[group][j]) != r)
            atomic_fetch_add(&done_early, 1);
    atomic_fetch_add(&done_calls, 1);
}

typedef struct Poster {
    QmJobQueue *q;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int want[GROUPS];  /* rounds to post, per group */
    bool quit;
} Poster;

/* posts each group when asked, from a thread of its own */
static void *poster_main(void *arg)
{
    Poster *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        int g = -1;
        for (int i = 0; i < GROUPS && g < 0; i++)
            if (p->want[i])
                g = i;
        if (g < 0) {
            if (p->quit)
                break;
            pthread_cond_wait(&p->cv, &p->lock);
            continue;
        }
        p->want[g]--;
        pthread_mutex_unlock(&p->lock);
        if (qm_jobq_post(p->q, (unsigned)g, JOBS))
            failures++;
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static void run(unsigned threads)
{
    n_threads = threads;
    memset(runs, 0, sizeof(runs));
    atomic_store(&bad_worker, 0);
    QmJobQueue q;
    memset(&q, 0, sizeof(q));
    CHECK(qm_jobq_start(&q, threads, GROUPS, job, NULL) == 0, "start");
    CHECK(q.n_th == threads, "%u threads started of %u", q.n_th, threads);
    atomic_store(&done_calls, 0);
    atomic_store(&done_early, 0);
    qm_jobq_on_done(&q, group_done);
    Poster p = { .q = &q };
    pthread_mutex_init(&p.lock, NULL);
    pthread_cond_init(&p.cv, NULL);
    pthread_t th;
    pthread_create(&th, NULL, poster_main, &p);
    /* the engine's pattern: slots in flight, collected in order */
    const int inflight = 4;
    for (int f = 0; f < ROUNDS + inflight; f++) {
        if (f < ROUNDS) {
            pthread_mutex_lock(&p.lock);
            p.want[f % GROUPS]++;
            pthread_cond_signal(&p.cv);
            pthread_mutex_unlock(&p.lock);
        }
        const int c = f - inflight;
        if (c >= 0) {
            const int g = c % GROUPS;
            CHECK(qm_jobq_wait(&q, (unsigned)g, 10000) == 1, "frame %d not done", c);
            const int expect = c / GROUPS + 1;
            for (int j = 0; j < JOBS; j++)
                CHECK(atomic_load(&runs[g][j]) == expect, "group %d job %d ran %d times, "
                      "expected %d", g, j, atomic_load(&runs[g][j]), expect);
        }
    }
    pthread_mutex_lock(&p.lock);
    p.quit = true;
    pthread_cond_signal(&p.cv);
    pthread_mutex_unlock(&p.lock);
    pthread_join(th, NULL);
    CHECK(atomic_load(&bad_worker) == 0, "worker index out of range");
    /* the callback runs just after the wait can see the group done */
    for (int i = 0; i < 1000 && threads && atomic_load(&done_calls) < ROUNDS; i++)
        usleep(1000);
    CHECK(atomic_load(&done_calls) == (threads ? ROUNDS : 0), "%u threads: %d done calls "
          "for %d postings", threads, atomic_load(&done_calls), ROUNDS);
    CHECK(atomic_load(&done_early) == 0, "done called before every job ran");
    /* never posted: times out */
    CHECK(qm_jobq_wait(&q, 0, 30) == 0, "an unposted group did not time out");
    CHECK(qm_jobq_wait(&q, GROUPS, 30) == -1, "a group out of range was accepted");
    /* posted twice without a wait: refused */
    CHECK(qm_jobq_post(&q, 1, JOBS) == 0, "post");
    CHECK(qm_jobq_post(&q, 1, JOBS) == -1, "a second post of a posted group was accepted");
    CHECK(qm_jobq_wait(&q, 1, 10000) == 1, "wait");
    /* stopped with work queued: returns */
    for (int g = 0; g < GROUPS; g++)
        qm_jobq_post(&q, (unsigned)g, JOBS);
    qm_jobq_stop(&q);
    pthread_mutex_destroy(&p.lock);
    pthread_cond_destroy(&p.cv);
}

int main(void)
{
    const unsigned counts[] = { 0, 1, 2, 4, 8 };
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
        run(counts[i]);
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("jobqueue: %d rounds of %d groups x %d jobs with 0, 1, 2, 4, 8 threads: ok\n",
           ROUNDS, GROUPS, JOBS);
    return 0;
}
