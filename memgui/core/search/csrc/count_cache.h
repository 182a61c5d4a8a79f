/*
** The document counts memgui_bm25 keeps per connection (count_cache.c), and what decides
** how a MATCH text's counts are kept: whole, or word by word for plain words.
*/
#ifndef MEMGUI_COUNT_CACHE_H
#define MEMGUI_COUNT_CACHE_H

#include "sqlite3ext.h"

#define CACHE_MAX 4096 /* (table, MATCH) entries kept, at most; all dropped when full */
#define CACHE_SLOTS 8192 /* the entries' hash index (twice CACHE_MAX: short probes) */
#define WORDS_MAX 64 /* a plain MATCH text of more words is kept whole */

typedef struct CacheEntry CacheEntry;
struct CacheEntry {
  char *zKey; /* table name, a NUL, the MATCH text (or the word) */
  int nKey;
  unsigned int iHash;
  int bWord;  /* keyed by one plain word of a MATCH text (nPhrase 1), not by the text */
  int nPhrase;
  sqlite3_int64 *aHit; /* rows matching each phrase */
};

typedef struct Cache Cache; /* one per connection: the function's user data */
struct Cache {
  sqlite3 *db;
  sqlite3_int64 nChange;  /* sqlite3_total_changes64 when the entries were counted */
  sqlite3_uint64 iVersion; /* the data versions of every schema then, summed */
  int nEntry;
  CacheEntry *aEntry; /* CACHE_MAX of them */
  int *aSlot;         /* CACHE_SLOTS: 1 + an entry's index, by its hash; 0 when free */
  sqlite3_int64 nCounted; /* phrase doclists counted so far (memgui_bm25_counted()) */
};

unsigned int memguiKeyHash(const char *z, int n);
void memguiCacheClear(Cache *p);
void memguiCacheDestroy(void *pArg);
CacheEntry *memguiCacheFind(Cache *p, const char *zKey, int nKey, unsigned int iHash,
                            int bWord, int nPhrase);
void memguiCacheAdd(Cache *p, char *zKey, int nKey, unsigned int iHash, int bWord,
                    int nPhrase, const sqlite3_int64 *aHit);
char *memguiCacheKey(const unsigned char *zTable, int nTable, const char *z, int n, int *pnKey);
int memguiPlainWords(const unsigned char *z, int n, int nPhrase, int *aStart, int *aLen);
int memguiCacheState(Cache *p, sqlite3_int64 *pnChange, sqlite3_uint64 *piVersion);

#endif
