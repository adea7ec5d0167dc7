/**
 * COCO classes (what CenterNet detects) named as Amazon Rekognition names its labels, with the
 * parents Rekognition's taxonomy gives them. Parents are reported as labels of their own too,
 * with the best confidence of their children, as DetectLabels does.
 */
interface Entry { name: string; parents: readonly string[] }

const VEHICLE = ['Transportation', 'Vehicle'];
const ANIMAL = ['Animal', 'Mammal'];
const FOOD = ['Food'];
const FRUIT = ['Food', 'Fruit', 'Plant'];
const FURNITURE = ['Furniture'];
const ELECTRONICS = ['Electronics'];
const APPLIANCE = ['Appliance', 'Electrical Device'];
const SPORT = ['Sport'];
const CUTLERY = ['Cutlery'];

const TABLE: Readonly<Record<string, Entry>> = {
  person: { name: 'Person', parents: [] },
  bicycle: { name: 'Bicycle', parents: VEHICLE },
  car: { name: 'Car', parents: VEHICLE },
  motorcycle: { name: 'Motorcycle', parents: VEHICLE },
  airplane: { name: 'Airplane', parents: ['Aircraft', ...VEHICLE] },
  bus: { name: 'Bus', parents: VEHICLE },
  train: { name: 'Train', parents: VEHICLE },
  truck: { name: 'Truck', parents: VEHICLE },
  boat: { name: 'Boat', parents: ['Watercraft', ...VEHICLE] },
  'traffic light': { name: 'Traffic Light', parents: ['Light'] },
  'fire hydrant': { name: 'Fire Hydrant', parents: [] },
  'stop sign': { name: 'Stop Sign', parents: ['Road Sign', 'Sign', 'Symbol'] },
  'parking meter': { name: 'Parking Meter', parents: [] },
  bench: { name: 'Bench', parents: FURNITURE },
  bird: { name: 'Bird', parents: ['Animal'] },
  cat: { name: 'Cat', parents: ['Pet', ...ANIMAL] },
  dog: { name: 'Dog', parents: ['Canine', 'Pet', ...ANIMAL] },
  horse: { name: 'Horse', parents: ANIMAL },
  sheep: { name: 'Sheep', parents: ['Livestock', ...ANIMAL] },
  cow: { name: 'Cow', parents: ['Cattle', 'Livestock', ...ANIMAL] },
  elephant: { name: 'Elephant', parents: ['Wildlife', ...ANIMAL] },
  bear: { name: 'Bear', parents: ['Wildlife', ...ANIMAL] },
  zebra: { name: 'Zebra', parents: ['Wildlife', ...ANIMAL] },
  giraffe: { name: 'Giraffe', parents: ['Wildlife', ...ANIMAL] },
  backpack: { name: 'Backpack', parents: ['Bag', 'Accessories'] },
  umbrella: { name: 'Umbrella', parents: [] },
  handbag: { name: 'Handbag', parents: ['Bag', 'Accessories'] },
  tie: { name: 'Tie', parents: ['Accessories', 'Formal Wear', 'Clothing'] },
  suitcase: { name: 'Suitcase', parents: ['Luggage', 'Bag'] },
  frisbee: { name: 'Frisbee', parents: ['Toy'] },
  skis: { name: 'Skiing', parents: SPORT },
  snowboard: { name: 'Snowboard', parents: SPORT },
  'sports ball': { name: 'Ball', parents: ['Sport', 'Sports Equipment'] },
  kite: { name: 'Kite', parents: ['Toy'] },
  'baseball bat': { name: 'Baseball Bat', parents: ['Sports Equipment', ...SPORT] },
  'baseball glove': { name: 'Baseball Glove', parents: ['Sports Equipment', ...SPORT] },
  skateboard: { name: 'Skateboard', parents: ['Sports Equipment', ...SPORT] },
  surfboard: { name: 'Surfboard', parents: ['Sports Equipment', ...SPORT] },
  'tennis racket': { name: 'Racket', parents: ['Sports Equipment', ...SPORT] },
  bottle: { name: 'Bottle', parents: [] },
  'wine glass': { name: 'Wine Glass', parents: ['Glass'] },
  cup: { name: 'Cup', parents: [] },
  fork: { name: 'Fork', parents: CUTLERY },
  knife: { name: 'Knife', parents: ['Weapon', ...CUTLERY] },
  spoon: { name: 'Spoon', parents: CUTLERY },
  bowl: { name: 'Bowl', parents: [] },
  banana: { name: 'Banana', parents: FRUIT },
  apple: { name: 'Apple', parents: FRUIT },
  sandwich: { name: 'Sandwich', parents: FOOD },
  orange: { name: 'Orange', parents: ['Citrus Fruit', ...FRUIT] },
  broccoli: { name: 'Broccoli', parents: ['Vegetable', 'Produce', ...FOOD] },
  carrot: { name: 'Carrot', parents: ['Vegetable', 'Produce', ...FOOD] },
  'hot dog': { name: 'Hot Dog', parents: FOOD },
  pizza: { name: 'Pizza', parents: FOOD },
  donut: { name: 'Donut', parents: ['Pastry', 'Dessert', ...FOOD] },
  cake: { name: 'Cake', parents: ['Dessert', ...FOOD] },
  chair: { name: 'Chair', parents: FURNITURE },
  couch: { name: 'Couch', parents: FURNITURE },
  'potted plant': { name: 'Potted Plant', parents: ['Plant'] },
  bed: { name: 'Bed', parents: FURNITURE },
  'dining table': { name: 'Dining Table', parents: ['Table', ...FURNITURE] },
  toilet: { name: 'Toilet', parents: ['Bathroom'] },
  tv: { name: 'TV', parents: ['Screen', ...ELECTRONICS] },
  laptop: { name: 'Laptop', parents: ['Computer', 'Pc', ...ELECTRONICS] },
  mouse: { name: 'Mouse', parents: ['Computer Hardware', 'Hardware', ...ELECTRONICS] },
  remote: { name: 'Remote Control', parents: ELECTRONICS },
  keyboard: { name: 'Computer Keyboard', parents: ['Computer Hardware', 'Hardware', ...ELECTRONICS] },
  'cell phone': { name: 'Mobile Phone', parents: ['Phone', ...ELECTRONICS] },
  microwave: { name: 'Microwave', parents: APPLIANCE },
  oven: { name: 'Oven', parents: APPLIANCE },
  toaster: { name: 'Toaster', parents: APPLIANCE },
  sink: { name: 'Sink', parents: [] },
  refrigerator: { name: 'Refrigerator', parents: APPLIANCE },
  book: { name: 'Book', parents: ['Publication'] },
  clock: { name: 'Clock', parents: [] },
  vase: { name: 'Vase', parents: ['Pottery', 'Jar'] },
  scissors: { name: 'Scissors', parents: [] },
  'teddy bear': { name: 'Teddy Bear', parents: ['Toy'] },
  'hair drier': { name: 'Hair Dryer', parents: APPLIANCE },
  toothbrush: { name: 'Toothbrush', parents: ['Tool'] },
};

/** A face found by the face detector is a `Face`, part of a `Person`. */
export const FACE: Entry = { name: 'Face', parents: ['Head', 'Person'] };

export function rekognitionEntry(cocoLabel: string): Entry {
  return TABLE[cocoLabel] ?? { name: cocoLabel.replace(/\b\w/g, (c) => c.toUpperCase()), parents: [] };
}
