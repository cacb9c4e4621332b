package seeds

// The seeds' published figures, quoted as their pages printed them. They
// were measured on the seeds' machines, not here; the pages render them
// after each table, labelled so.

// ladderPublished is the k6 ladder's table per VU level: the parameter,
// then the InputQ pattern's and the Mutex pattern's values.
var ladderPublished = []struct {
	VUs      int
	Duration string
	Rows     [][3]string
}{
	{10, "30 seconds", [][3]string{
		{"data_received", "23 MB 754 kB/s", "24 MB 798 kB/s"},
		{"data_sent", "29 MB 956 kB/s", "30 MB 1.0 MB/s"},
		{"grpc_req_duration", "avg=719.94µs min=184.45µs med=687.39µs max=10.71ms p(90)=1.16ms p(95)=1.37ms", "avg=712.01µs min=179.46µs med=672.36µs max=9.41ms p(90)=1.15ms p(95)=1.36ms"},
		{"iteration_duration", "avg=2.19ms min=768.88µs med=1.97ms max=781.69ms p(90)=2.89ms p(95)=3.34ms", "avg=2.07ms min=766.71µs med=1.97ms max=13.3ms p(90)=2.85ms p(95)=3.29ms"},
		{"iterations", "135980 4532.286646/s", "144028 4800.542003/s"},
	}},
	{100, "20 seconds", [][3]string{
		{"data_received", "36 MB 1.8 MB/s", "32 MB 1.6 MB/s"},
		{"data_sent", "45 MB 2.3 MB/s", "41 MB 2.0 MB/s"},
		{"grpc_req_duration", "avg=1.63ms min=188.12µs med=791.59µs max=27.96ms p(90)=4.19ms p(95)=5.81ms", "avg=1.63ms min=179.07µs med=778.16µs max=25.06ms p(90)=4.23ms p(95)=5.89ms"},
		{"iteration_duration", "avg=9.35ms min=863.84µs med=8.25ms max=164.59ms p(90)=15.38ms p(95)=17.92ms", "avg=10.33ms min=883.24µs med=8.17ms max=300.16ms p(90)=16.03ms p(95)=19.01ms"},
		{"iterations", "213401 10664.646039/s", "193205 9656.439518/s"},
	}},
	{200, "20 seconds", [][3]string{
		{"data_received", "37 MB 1.7 MB/s", "38 MB 1.8 MB/s"},
		{"data_sent", "46 MB 2.2 MB/s", "48 MB 2.3 MB/s"},
		{"grpc_req_duration", "avg=1.88ms min=186.67µs med=820.17µs max=31.36ms p(90)=5ms p(95)=7.32ms", "avg=1.82ms min=195.28µs med=812.78µs max=46.31ms p(90)=4.76ms p(95)=6.94ms"},
		{"iteration_duration", "avg=18.42ms min=940.36µs med=11.26ms max=3.06s p(90)=21.28ms p(95)=24.98ms", "avg=17.8ms min=864.02µs med=11.16ms max=3.05s p(90)=20.6ms p(95)=24.09ms"},
		{"iterations", "218389 10398.382496/s", "226902 10809.455794/s"},
	}},
	{300, "20 seconds", [][3]string{
		{"data_received", "37 MB 1.7 MB/s", "37 MB 1.8 MB/s"},
		{"data_sent", "47 MB 2.1 MB/s", "46 MB 2.2 MB/s"},
		{"grpc_req_duration", "avg=1.92ms min=193.8µs med=824.72µs max=40.62ms p(90)=5.03ms p(95)=7.58ms", "avg=1.87ms min=190.44µs med=817.61µs max=70.83ms p(90)=4.77ms p(95)=7.32ms"},
		{"iteration_duration", "avg=27.03ms min=946.79µs med=11.55ms max=7.27s p(90)=21.99ms p(95)=26.5ms", "avg=27.77ms min=945.71µs med=11.74ms max=7.19s p(90)=21.96ms p(95)=26.78ms"},
		{"iterations", "223305 10109.286962/s", "218096 10453.813865/s"},
	}},
	{500, "20 seconds", [][3]string{
		{"data_received", "37 MB 1.7 MB/s", "37 MB 1.7 MB/s"},
		{"data_sent", "47 MB 2.1 MB/s", "47 MB 2.2 MB/s"},
		{"grpc_req_duration", "avg=1.88ms min=192.69µs med=799.54µs max=57.02ms p(90)=4.75ms p(95)=7.33ms", "avg=1.83ms min=185.09µs med=756.21µs max=60.66ms p(90)=4.57ms p(95)=7.22ms"},
		{"iteration_duration", "avg=46.17ms min=954.63µs med=12.08ms max=7.19s p(90)=23.86ms p(95)=31.52ms", "avg=45.75ms min=998.44µs med=11.82ms max=7.21s p(90)=24ms p(95)=32.36ms"},
		{"iterations", "221074 10160.735101/s", "220961 10266.287413/s"},
	}},
	{1000, "20 seconds", [][3]string{
		{"data_received", "37 MB 1.5 MB/s", "36 MB 1.6 MB/s"},
		{"data_sent", "47 MB 1.9 MB/s", "47 MB 2.0 MB/s"},
		{"grpc_req_duration", "avg=2.31ms min=178.27µs med=1.06ms max=485.17ms p(90)=5.77ms p(95)=8.81ms", "avg=2.27ms min=185.06µs med=1.05ms max=454.45ms p(90)=5.5ms p(95)=8.39ms"},
		{"iteration_duration", "avg=91.98ms min=950.8µs med=12.93ms max=15.44s p(90)=26.4ms p(95)=1.02s", "avg=93.12ms min=952.92µs med=12.76ms max=21.1s p(90)=26.23ms p(95)=1.01s"},
		{"iterations", "223862 8924.532635/s", "220310 9430.541952/s"},
	}},
}

// bankPublished is the bank benchmark's results, one row per bankRows row
// (the same order), as printed: RPS (req/s), average, .99 and max latency
// (ms), total time (ms). Its machine: Ubuntu 20.04, 4 cores, 8 GB, SSD;
// a Vert.x service over MySQL and Redis.
var bankPublished = [][5]string{
	{"493.97", "39.29", "68.04", "68.04", "1010"},
	{"524.11", "37.44", "66.89", "83.21", "1950"},
	{"588.14", "31.57", "61.87", "75.05", "850.14"},
	{"614.72", "31.32", "62.76", "89.28", "1630"},
	{"1131.41", "16.61", "36.3", "44.89", "441.93"},
	{"1117.43", "16.89", "33.56", "42.72", "894.91"},
	{"6211.3", "3", "8.2", "13.52", "321.99"},
	{"6657.41", "2.75", "7.82", "10.12", "300.42"},
	{"5374.94", "8.83", "28.51", "36.96", "372.1"},
	{"3193.58", "14.98", "42.02", "46.93", "626.26"},
}

// bankPublishedCached are the seed's two history rows read from its Redis
// cache, added after its other rows: the case each repeats, its label, and
// its figures as bankPublished's.
var bankPublishedCached = []struct {
	Case, Label string
	Figures     [5]string
}{
	{"history-one", "GetHistory, one user, cached", [5]string{"7509", "6.21", "14.67", "26.99", "266.35"}},
	{"history-random", "GetHistory, random users, cached at random", [5]string{"5789.23", "8.14", "22.05", "36.65", "345.47"}},
}

// rpcxPublished is the page's gRPC table with client and server on one
// machine (24 cores, Xeon E5-2620 v2, Go 1.7), a million requests per row:
// concurrent clients, mean, median, max, min (ms), TPS. The page prints no
// p99 for this table.
var rpcxPublished = [][6]string{
	{"100", "0", "0", "20", "0", "55561"},
	{"500", "7", "6", "59", "0", "62593"},
	{"1000", "14", "12", "103", "0", "65329"},
	{"2000", "28", "24", "163", "0", "67033"},
	{"5000", "71", "64", "380", "0", "63803"},
}

// rpcxPublishedRPCX is the same table for rpcx itself.
var rpcxPublishedRPCX = [][6]string{
	{"100", "0", "0", "17", "0", "164338"},
	{"500", "2", "1", "40", "0", "181126"},
	{"1000", "4", "3", "56", "0", "186219"},
	{"2000", "9", "7", "105", "0", "182815"},
	{"5000", "25", "22", "200", "0", "178858"},
}

// ngrinderPublished is the post's product-list API before and after its
// Redis cache: metric, before, after.
var ngrinderPublished = [][3]string{
	{"TPS (average)", "662", "1,124"},
	{"peak TPS", "921", "1,547"},
	{"errors", "2,674", "0"},
	{"CPU", "—", "100%"},
}
