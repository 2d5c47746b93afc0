# ratios.py FILE.json ...: per query, the median over warm rounds of colink/DuckDB elapsed, and the Q1-Q22 total per round (bench/duckdb --colink output).
import json,statistics as st,sys
# per query: median over warm rounds of colink/duckdb ratio, for each run file
runs=sys.argv[1:]
def ratios(f):
    d=json.load(open(f)); s=[x for x in d['samples'] if not x['cold']]
    by={}
    for x in s: by.setdefault((x['query'],x['round']),{})[x['system']]=x['elapsed_s']
    q={}
    tot={}
    for (qq,r),v in by.items():
        if 'colink' in v and 'duckdb' in v:
            q.setdefault(qq,[]).append(v['colink']/v['duckdb'])
            t=tot.setdefault(r,[0,0]); 
            if qq.startswith('Q'): t[0]+=v['colink']; t[1]+=v['duckdb']
    return {k:st.median(v) for k,v in q.items()}, sorted(a/b for a,b in tot.values())
res=[ratios(f) for f in runs]
order=sorted(res[0][0], key=lambda k:(k[0]!='Q', int(k[1:]) if k[0]=='Q' else int(k[2:])))
print('| query | '+' | '.join(r.split('/')[-1].replace('.json','') for r in runs)+' |')
print('|---|'+'--:|'*len(runs))
for q in order: print(f'| {q} | '+' | '.join(f'{r[0][q]:.2f}' for r in res)+' |')
print('| **Q1–Q22 total, per round: median [min–max]** | '+' | '.join(f'{st.median(r[1]):.2f} [{r[1][0]:.2f}–{r[1][-1]:.2f}]' for r in res)+' |')
